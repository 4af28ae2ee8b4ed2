import Fastify, { type RouteOptions } from 'fastify'
import t from '../support/file-test.js'
import { service } from '../../src/app.js'
import { operations, type OperationId } from '../../src/generated/openapi.js'
import { build, testConfig, testDatabase } from '../helper.js'
import { openApiDocument } from '../support/openapi-document.js'

const doc = openApiDocument() as {
  paths: Record<string, Record<string, { operationId: string }>>
}

/**
 * Every operation with the status its plainest request gets. A Record over OperationId: an
 * operation added to openapi.yaml without a line here fails the type check.
 */
const plainRequest: Record<OperationId, number> = {
  listPrices: 200,
  exportPricesCsv: 200,
  getLatestPrices: 200,
  listPriceChanges: 200,
  listTowns: 200,
  listCycles: 200,
  getCyclesFeed: 200,
  getCycle: 422, // the URL's `:valid_from` is not a date
  getHealth: 200,
  ingestCsv: 422, // D11: no file (INGEST_TOKEN is unset in tests, so the route is open)
  dryRunIngestCsv: 422,
  withdrawCycle: 422, // the URL's `:valid_from` is not a date (the token is unset in tests)
  getOpenApiJson: 200,
  getOpenApiYaml: 200
}

t.test('the generated operations are exactly the operations of openapi.yaml', async (t) => {
  const fromDoc = Object.entries(doc.paths).flatMap(([url, item]) =>
    Object.entries(item).map(([method, op]) => ({ id: op.operationId, method: method.toUpperCase(), url: url.replace(/\{(\w+)\}/g, ':$1') })))
  t.strictSame(
    Object.entries(operations).map(([id, op]) => ({ id, method: op.method, url: op.url })).sort((a, b) => a.id.localeCompare(b.id)),
    fromDoc.sort((a, b) => a.id.localeCompare(b.id)))
})

t.test('every operation has a route declared from it, and every /v1 route is an operation', async (t) => {
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => { routes.push(route) })
  await app.register(service, { config: testConfig(), database: await testDatabase() })
  await app.ready()

  const v1 = routes.filter((r) => r.url.startsWith('/v1/') && r.method !== 'HEAD')
  const declared = v1.map((r) => (r.schema as { operationId?: string } | undefined)?.operationId)
  t.strictSame([...declared].sort(), Object.keys(operations).sort(), 'one route per operation, each declared from it')
  for (const route of v1) {
    const id = (route.schema as { operationId: OperationId }).operationId
    t.strictSame({ method: route.method, url: route.url }, { method: operations[id].method, url: operations[id].url }, id)
  }
})

t.test('every operation answers its plainest request (none is left unrouted)', async (t) => {
  const app = await build(t, { contract: false })
  for (const [id, status] of Object.entries(plainRequest) as Array<[OperationId, number]>) {
    const { method, url } = operations[id]
    const res = await app.inject({ method, url })
    t.equal(res.statusCode, status, `${id}: ${method} ${url}`)
  }
})
