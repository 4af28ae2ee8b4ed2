import net, { type AddressInfo } from 'node:net'
import t from '../support/file-test.js'
import { operations } from '../../src/generated/openapi.js'
import { build, testDatabase } from '../helper.js'
import { TOKEN } from '../fixtures/ingest.js'
import { seedFixture } from './_fixtures.js'

/**
 * D63: HEAD of every GET route answers the GET's headers and sends no body; where the body is a
 * CSV export streamed from the database, HEAD sends no statement at all (Fastify's implied HEAD
 * used to run the export and discard it). Over raw sockets: only the wire shows a body's absence.
 */

t.before(seedFixture)

/** One request with `Connection: close`: the head's fields and every byte after it. */
async function exchange (port: number, method: string, url: string, headers: Record<string, string> = {}): Promise<{ status: number, headers: Record<string, string>, body: Buffer }> {
  const socket = net.connect(port, '127.0.0.1')
  const lines = Object.entries({ host: 'localhost', connection: 'close', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`).join('')
  socket.write(`${method} ${url} HTTP/1.1\r\n${lines}\r\n`)
  const chunks: Buffer[] = []
  for await (const chunk of socket) chunks.push(chunk as Buffer)
  const raw = Buffer.concat(chunks)
  const end = raw.indexOf('\r\n\r\n')
  const [statusLine = '', ...fields] = raw.subarray(0, end).toString('latin1').split('\r\n')
  const parsed: Record<string, string> = {}
  for (const field of fields) {
    const colon = field.indexOf(':')
    parsed[field.slice(0, colon).toLowerCase()] = field.slice(colon + 1).trim()
  }
  return { status: Number(statusLine.split(' ')[1]), headers: parsed, body: raw.subarray(end + 4) }
}

/** A URL answering each GET route; `csv`: its body is a streamed export; `live`: its body counts these requests. */
const GETS: Array<{ url: string, headers?: Record<string, string>, csv?: boolean, live?: boolean }> = [
  { url: '/v1/prices?limit=5' },
  { url: '/v1/prices.csv', csv: true },
  { url: '/v1/prices.csv?town=nairobi&limit=2', csv: true },
  { url: '/v1/prices?format=csv', csv: true },
  { url: '/v1/prices', headers: { accept: 'text/csv' }, csv: true },
  { url: '/v1/prices/latest' },
  { url: '/v1/prices/changes' },
  { url: '/v1/towns' },
  { url: '/v1/cycles' },
  { url: '/v1/cycles/feed.atom' },
  { url: '/v1/cycles/2026-10-15' },
  { url: '/v1/health' },
  { url: '/v1/openapi.json' },
  { url: '/v1/openapi.yaml' },
  { url: '/' },
  { url: '/docs/' },
  { url: '/metrics', headers: { authorization: 'Bearer metrics-token' }, live: true },
  { url: '/admin' }
]

/** Fields that describe the body a GET would send; HEAD must send the same (RFC 9110 9.3.2). */
const DESCRIBING = ['content-type', 'content-disposition', 'content-location', 'cache-control', 'etag', 'vary', 'content-encoding']

t.test('[D63] every GET operation of the contract is in this walk', async (t) => {
  const walked = new Set(GETS.map((g) => g.url.split('?')[0]))
  for (const op of Object.values(operations).filter((o) => o.method === 'GET')) {
    t.ok(walked.has(op.url.replace(':valid_from', '2026-10-15')), op.url)
  }
})

t.test('[D63] HEAD of every GET route: the GET\'s status and headers, no body; a CSV export sends no statement', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN, metricsToken: 'metrics-token' } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as AddressInfo).port
  const database = await testDatabase()
  for (const { url, headers, csv, live } of GETS) {
    const label = `${url} ${JSON.stringify(headers ?? {})}`
    const before = database.statements()
    const head = await exchange(port, 'HEAD', url, headers)
    const statements = database.statements() - before
    const get = await exchange(port, 'GET', url, headers)
    t.equal(head.body.length, 0, `${label}: HEAD sends no body`)
    t.equal(head.status, get.status, `${label}: status`)
    for (const field of DESCRIBING) t.equal(head.headers[field], get.headers[field], `${label}: ${field}`)
    if (get.headers['content-length'] !== undefined && live !== true) t.equal(head.headers['content-length'], get.headers['content-length'], `${label}: content-length`)
    if (csv === true) {
      t.equal(get.headers['content-type'], 'text/csv; charset=utf-8', `${label}: the GET is the export`)
      t.ok(get.body.length > 0)
      t.equal(statements, 0, `${label}: HEAD read nothing from the database`)
      t.equal(head.headers['content-length'], undefined, `${label}: no length is claimed for a body never made`)
      t.equal(head.headers['transfer-encoding'], undefined)
    }
  }
})
