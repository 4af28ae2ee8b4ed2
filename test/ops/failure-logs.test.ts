import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { mock } from 'node:test'
import { sql } from 'drizzle-orm'
import postgres from 'postgres'
import t from '../support/file-test.js'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { migrateDatabase } from '../../src/db/migrate.js'
import { errorFields, MESSAGE_MAX_CHARS } from '../../src/logging/error-fields.js'
import { createServiceLogger } from '../../src/logging/service-logger.js'
import { checkResponses } from '../contract/openapi-validator.js'
import { backend, testConfig, testDatabase } from '../helper.js'
import { CuttableProxy } from '../replicas/_harness.js'
import { needs, TEST_POSTGRES_URL } from '../services.js'

/** D61: a failure is one short line with its cause; the same failure again is counted, not repeated. */

interface Line { level: number, msg: string, repeats?: number, reqId?: string, res?: { statusCode: number }, err?: Record<string, unknown> }

function collector (): { stream: Writable, raw: string[], lines: () => Line[] } {
  const raw: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { raw.push(String(chunk)); done() } })
  return { stream, raw, lines: () => raw.map((l) => JSON.parse(l) as Line) }
}

const DRIVER_ERROR = backend === 'pglite' ? 'DatabaseError' : 'PostgresError'

t.test('[D61] a failed query is logged by the driver\'s message and code: no SQL, no bind parameters', async (t) => {
  const { db } = await testDatabase()
  const parameter = `secret-row-${'x'.repeat(200_000)}`
  const failed = await db.execute(sql`SELECT length(${parameter}) / 0 AS never`).then(() => undefined, (err: unknown) => err)
  t.same(errorFields(failed), { type: DRIVER_ERROR, message: 'division by zero', code: '22012', severity: 'ERROR' })

  // PostgreSQL repeats a refused value in its message: cut, whatever its size
  const echoed = await db.execute(sql`SELECT ${parameter}::int AS never`).then(() => undefined, (err: unknown) => err)
  const fields = errorFields(echoed)
  t.equal(fields.code, '22P02')
  t.equal(fields.message, `invalid input syntax for type integer: "${parameter}"`.slice(0, MESSAGE_MAX_CHARS) + `… (${parameter.length + 41} characters)`)
  t.notMatch(JSON.stringify([errorFields(failed), fields]), /SELECT|length\(|\/ 0/, 'no query text')
})

t.test('[D61] an error of the service\'s own code keeps a short stack; a chain of causes is followed', async (t) => {
  const inner = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })
  const outer = new TypeError(`cannot read ${'y'.repeat(2000)}`, { cause: inner })
  const fields = errorFields(outer)
  t.equal(fields.type, 'TypeError')
  t.equal(fields.message.length, MESSAGE_MAX_CHARS + ' (2012 characters)'.length + 1)
  t.ok((fields.stack ?? '').split('\n').length <= 12, 'at most 12 lines of stack')
  t.ok((fields.stack ?? '').length <= 2000 + ' (9999 characters)'.length + 1)
  t.same(fields.cause, { type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:1', code: 'ECONNREFUSED' }, 'a driver\'s error: its code, no stack')
})

t.test('[D61] the same failure again within the window is counted, and one line gives the count', async (t) => {
  // the windows' timers run on a fake clock, so a slow host's turns cannot move a log call into the next window
  mock.timers.enable({ apis: ['setTimeout'] })
  t.teardown(() => { mock.timers.reset() })
  const { stream, lines } = collector()
  const log = createServiceLogger({ level: 'info', stream, repeatWindowMs: 300 })
  if (log === undefined) throw new Error('no logger')
  const refused = (): Error => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
  for (let i = 0; i < 1000; i++) log.child({ reqId: `req-${i}` }).error({ err: refused(), res: { statusCode: 500 } }, 'request completed')
  log.error({ err: Object.assign(new Error('disk full'), { code: '53100' }), res: { statusCode: 507 } }, 'request completed')
  log.warn({ err: refused() }, 'a warning is another failure')
  log.info({ err: refused() }, 'below warn: never counted')
  log.info({ err: refused() }, 'below warn: never counted')
  t.same(lines().map((l) => [l.msg, l.reqId, l.err?.code]), [
    ['request completed', 'req-0', 'ECONNREFUSED'],
    ['request completed', undefined, '53100'],
    ['a warning is another failure', undefined, 'ECONNREFUSED'],
    ['below warn: never counted', undefined, 'ECONNREFUSED'],
    ['below warn: never counted', undefined, 'ECONNREFUSED']
  ], 'each failure once, each distinct one on its own line')

  mock.timers.tick(450) // the window closes
  const counted = lines().slice(5)
  t.same(counted.map((l) => [l.level, l.msg, l.repeats, l.res?.statusCode, l.err]), [
    [50, 'request completed (repeated 999 times within 0.3 s)', 999, 500, { type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:5432', code: 'ECONNREFUSED' }]
  ], 'one line with the count, and none for failures that did not repeat')

  log.error({ err: refused(), res: { statusCode: 500 } }, 'request completed')
  t.equal(lines().length, 6, 'still counting in the next window while the failure goes on')
  mock.timers.tick(450)
  t.equal(lines()[6]?.repeats, 1)
  mock.timers.tick(450)
  log.error({ err: refused(), res: { statusCode: 500 } }, 'request completed')
  t.same(lines().slice(7).map((l) => [l.msg, l.repeats]), [['request completed', undefined]], 'after a quiet window it is written in full again')
})

t.test('[D61] a database outage: every failed request in short lines without SQL, repeats collapsed', await needs('postgres'), async (t) => {
  const schema = `outage_logs_${process.pid}_${randomBytes(3).toString('hex')}`
  const admin = postgres(TEST_POSTGRES_URL, { max: 1, onnotice: () => {} })
  await admin.unsafe(`CREATE SCHEMA "${schema}"`)
  t.teardown(async () => { await admin.unsafe(`DROP SCHEMA "${schema}" CASCADE`); await admin.end() })
  const target = new URL(TEST_POSTGRES_URL)
  const proxy = new CuttableProxy(Number(target.port === '' ? 5432 : target.port), target.hostname)
  await proxy.start()
  t.teardown(async () => { await proxy.close() })
  const via = new URL(TEST_POSTGRES_URL)
  via.hostname = '127.0.0.1'
  via.port = String(proxy.port)
  // ten connections, each waiting longer between its own attempts to reconnect (postgres.js's backoff)
  const database = await openDatabase({ url: via.toString(), schema, poolMax: 10, connectTimeoutSeconds: 2 })
  t.teardown(async () => { await database.close() })
  await migrateDatabase(database, via.toString())

  const { stream, raw, lines } = collector()
  const token = 'outage-logs-token-0123456789'
  const app = await buildApp({ config: testConfig({ ingestToken: token }), database, logger: { level: 'info', stream, repeatWindowMs: 60_000 } })
  checkResponses(app, (v) => t.fail(`contract: ${v.method} ${v.route} ${v.status}: ${v.problem}`, { violation: v }))
  t.teardown(async () => { await app.close() })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  t.equal((await fetch(`${url}/v1/prices`)).status, 200)
  raw.length = 0

  await proxy.cut()
  const csv = 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)\n15-10-2026,14-11-2026,Secret Town,180.00,171.00,150.50'
  const upload = (): RequestInit => {
    const body = new FormData()
    body.append('file', new Blob([csv], { type: 'text/csv' }), 'cycle.csv')
    return { method: 'POST', headers: { authorization: `Bearer ${token}` }, body }
  }
  const requests: Array<[string, RequestInit?]> = [
    ...Array.from({ length: 12 }, (_, i): [string] => [`/v1/prices?town=Secret%20Town&limit=${i + 1}`]),
    ['/v1/health'],
    ['/v1/ingest/csv', upload()],
    ['/v1/ingest/csv/dry-run', upload()],
    ['/v1/cycles/2026-10-15', { method: 'DELETE', headers: { authorization: `Bearer ${token}` } }]
  ]
  const statuses: number[] = []
  for (const [path, init] of requests) statuses.push((await fetch(`${url}${path}`, init)).status)
  t.same(statuses, requests.map(() => 500), 'every request failed with the contract\'s 500')
  await app.close() // writes the counts still open

  const written = lines()
  if (process.env.SHOW_LINES === '1') console.error(raw.join(''))
  const longest = Math.max(...raw.map((l) => l.length))
  t.ok(longest < 1000, `every line short: the longest ${longest} characters`)
  t.notMatch(raw.join(''), /select|insert|delete from|fuel_prices|Secret Town|params/i, 'no SQL, no parameters')
  t.ok(written.every((l) => l.level === 50 && typeof l.err?.message === 'string'), 'each line at error, with its cause')
  t.equal(written.reduce((sum, l) => sum + (l.repeats ?? 1), 0), requests.length, 'every failure accounted for once')
  const firsts = written.filter((l) => l.repeats === undefined)
  // refused connections, and on a loaded machine perhaps a dropped one or the health check's own timeout
  t.ok(firsts.length <= 3, `one line per distinct cause (${firsts.map((l) => `${String(l.err?.code ?? l.err?.message)}`).join(', ')}), the rest counted`)
  t.ok(firsts.some((l) => l.err?.code === 'ECONNREFUSED'), 'the cause: the database refuses connections')
  t.ok(written.length <= 2 * firsts.length, `${written.length} lines for ${requests.length} failures`)
})
