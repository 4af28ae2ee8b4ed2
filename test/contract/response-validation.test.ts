import { gzipSync } from 'node:zlib'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import { HttpError } from '../../src/http-server/http-error.js'
import { build } from '../helper.js'
import { openApiDocument } from '../support/openapi-document.js'
import { OpenApiContract, checkResponses, type ObservedResponse, type Violation } from './openapi-validator.js'

/** The response check that test/helper.ts attaches to every app: what it accepts and rejects. */

const contract = OpenApiContract.load()
const PUBLIC = 'public, max-age=86400, s-maxage=604800'
const price = { id: 1, town: 'Nairobi', super_petrol: 180.5, diesel: 170, kerosene: 150.25, valid_from: '2026-10-15', valid_to: '2026-11-14' }
const JSON_TYPE = 'application/json; charset=utf-8'

const observed = (overrides: Partial<ObservedResponse>): ObservedResponse => ({
  method: 'GET',
  route: '/v1/prices',
  status: 200,
  headers: { 'content-type': JSON_TYPE, 'cache-control': PUBLIC },
  body: JSON.stringify([price]),
  ...overrides
})

t.test('every response schema and header schema of openapi.yaml compiles (they are compiled lazily for the other files)', async (t) => {
  const document = openApiDocument()
  const deref = (node: Record<string, any>): Record<string, any> => typeof node.$ref === 'string'
    ? deref((node.$ref as string).slice(2).split('/').reduce<any>((at, part) => at[part], document))
    : node
  let expected = 0
  for (const item of Object.values<Record<string, any>>(document.paths)) {
    for (const op of Object.values<Record<string, any>>(item)) {
      for (const response of Object.values<Record<string, any>>(op.responses ?? {})) {
        const r = deref(response)
        expected += Object.keys(r.content ?? {}).length + Object.keys(r.headers ?? {}).length
      }
    }
  }
  t.equal(OpenApiContract.load().compileAll(), expected)
})

t.test('a response that honours the document has no problems', async (t) => {
  t.same(contract.check(observed({})), [])
  t.same(contract.check(observed({ body: '[]' })), [])
  t.same(contract.check(observed({ status: 304, headers: { etag: '"x"', 'cache-control': PUBLIC }, body: undefined })), [])
  t.same(contract.check(observed({ route: '/v1/towns', body: '["El Wak","Elburgon"]' })), [])
  t.same(contract.check(observed({ status: 422, headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store' }, body: JSON.stringify({ detail: [{ loc: ['query', 'limit'], msg: 'm', type: 't' }] }) })), [])
  t.same(contract.check(observed({ route: '/v1/prices.csv', headers: { 'content-type': 'text/csv; charset=utf-8', 'cache-control': PUBLIC }, body: 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)\r\n' })), [])
  // D43: an answer given on behalf of another operation is held to that operation's contract.
  t.same(contract.check(observed({ headers: { 'content-type': 'text/csv; charset=utf-8', 'cache-control': PUBLIC, 'content-location': '/v1/prices.csv?town=x' }, body: 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)\r\n' })), [])
  t.same(contract.check(observed({ headers: { 'content-type': JSON_TYPE, 'content-encoding': 'gzip', 'cache-control': PUBLIC }, body: gzipSync(JSON.stringify([price])) })), [], 'compressed bodies are decoded first')
  t.same(contract.check(observed({ method: 'HEAD', body: undefined })), [], 'HEAD: status and headers only')
})

t.test('bodies, statuses, media types and headers that break the document are problems', async (t) => {
  const { id: _id, ...noId } = price
  t.same(contract.check(observed({ body: JSON.stringify([noId]) })), ["body /0 must have required property 'id'"])
  t.same(contract.check(observed({ body: JSON.stringify([{ ...price, extra: 1 }]) })), ['body /0 must NOT have additional properties'])
  t.same(contract.check(observed({ body: JSON.stringify([{ ...price, valid_from: '15-10-2026' }]) })), ['body /0/valid_from must match format "date"'])
  t.same(contract.check(observed({ status: 418 })), ['status 418 is not documented (documented: 200, 304, 422, 429, 500, 503)'])
  t.same(contract.check(observed({ route: '/v1/health', status: 422, body: '{"detail":"x"}' })), ['status 422 is not documented (documented: 200, 500)'])
  t.same(contract.check(observed({ headers: { 'content-type': 'text/plain', 'cache-control': PUBLIC } })), ['content-type text/plain is not documented (documented: application/json)'])
  t.same(contract.check(observed({ headers: { 'content-type': 'text/csv', 'cache-control': PUBLIC }, body: 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)\r\n' })),
    ['content-type text/csv is not documented (documented: application/json)'], 'D43: /v1/prices itself documents JSON only')
  t.same(contract.check(observed({ route: '/v1/prices.csv', headers: { 'content-type': 'text/csv', 'cache-control': PUBLIC }, body: 'from,to\r\n' })), ['body must match pattern "^From,To,Town,Super \\(PMS\\),Diesel \\(AGO\\),Kerosene \\(IK\\)\\r\\n"'])
  t.same(contract.check(observed({ body: '[{' })), ['body is not JSON: "[{"'])
  t.same(contract.check(observed({ status: 304, headers: { 'cache-control': PUBLIC }, body: '[]' })), ['a body was sent but status 304 documents none'])
  t.same(contract.check(observed({ headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store' } })), ['header cache-control: "no-store" must be equal to constant; must be equal to one of the allowed values'], 'D17 is part of the contract (a const with its enum)')
  t.same(contract.check(observed({ headers: { 'content-type': JSON_TYPE, 'ratelimit-remaining': 'many' } })), ['header ratelimit-remaining: "many" must be integer'])
})

t.test('answers outside every operation are not judged: 404, 405, /docs, /metrics, preflight', async (t) => {
  t.equal(contract.check(observed({ route: undefined, status: 404 })), undefined)
  t.equal(contract.check(observed({ method: 'DELETE', status: 405 })), undefined)
  t.equal(contract.check(observed({ route: '/docs' })), undefined)
  t.equal(contract.check(observed({ route: '/metrics' })), undefined)
  t.equal(contract.check(observed({ method: 'OPTIONS', route: '*' })), undefined)
})

t.test('validatorFor maps (method, route, status, content type) to the schema', async (t) => {
  t.equal(contract.validatorFor('GET', '/v1/towns', 200, 'application/json; charset=utf-8')?.(['Nairobi']), true)
  t.equal(contract.validatorFor('HEAD', '/v1/towns', 200, 'application/json')?.([1]), false)
  t.equal(contract.validatorFor('GET', '/v1/towns', 200, 'text/csv'), undefined)
  t.equal(contract.validatorFor('POST', '/v1/towns', 200, 'application/json'), undefined)
})

/** A stand-in for tap's Test that records what build() does with it. */
function recordingTest (t: Test): { test: Test, failures: Array<{ message: string, violation: Violation }> } {
  const failures: Array<{ message: string, violation: Violation }> = []
  const test = {
    teardown: (fn: () => Promise<void>) => t.teardown(fn),
    fail: (message: string, extra: { violation: Violation }) => { failures.push({ message, violation: extra.violation }); return true }
  } as unknown as Test
  return { test, failures }
}

t.test('build() fails the test on an off-contract response, and only then', async (t) => {
  const { test, failures } = recordingTest(t)
  const app = await build(test)
  app.prices.listTowns = async () => { throw new HttpError(418, "I'm a teapot") }
  t.equal((await app.inject('/v1/towns')).statusCode, 418)
  t.same(failures, [{
    message: 'contract: GET /v1/towns 418: status 418 is not documented (documented: 200, 304, 429, 500)',
    violation: { operation: 'listTowns', method: 'GET', route: '/v1/towns', status: 418, problem: 'status 418 is not documented (documented: 200, 304, 429, 500)' }
  }])
  failures.length = 0
  t.equal((await app.inject('/v1/prices?format=csv')).statusCode, 200, 'a streamed body is checked as it passes')
  t.equal((await app.inject('/v1/nowhere')).statusCode, 404)
  t.same(failures, [])
})

t.test('a streamed body reaches the client unchanged through the check', async (t) => {
  const app = await build(t, { contract: false })
  const seen: Violation[] = []
  checkResponses(app, (v) => seen.push(v))
  app.prices.streamPrices = async function * () { yield [price]; yield [{ ...price, id: 2, town: 'Mombasa' }] }
  const res = await app.inject('/v1/prices?format=csv')
  t.equal(res.body, 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)\r\n15-10-2026,14-11-2026,Nairobi,180.50,170.00,150.25\r\n15-10-2026,14-11-2026,Mombasa,180.50,170.00,150.25\r\n')
  t.same(seen, [])
})
