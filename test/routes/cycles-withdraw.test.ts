import type { AddressInfo } from 'node:net'
import postgres from 'postgres'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { servicePlugins } from '../../src/app.js'
import { postgresDatabase, postgresOptions, type Database } from '../../src/db/client.js'
import { INGEST_LOCK_KEY } from '../../src/ingest/write.js'
import { MemorySlidingWindowStore } from '../../src/rate-limit/memory-store.js'
import { AUTH, TOKEN, storedRows } from '../fixtures/ingest.js'
import { backend, build, testConfig, testDatabase, TEST_DATABASE_URL } from '../helper.js'
import { seedFixture, STORED } from './_fixtures.js'
import { INGEST_RUNNING, INVALID_WITHDRAW_TOKEN } from '../../src/routes/cycles/withdraw.js'

// The fixture: cycles 2026-08-15, 2026-09-15 and 2026-10-15 (the latest) of five towns.
t.beforeEach(seedFixture)

const withdraw = (validFrom: string, headers: Record<string, string> = AUTH): { method: 'DELETE', url: string, headers: Record<string, string> } =>
  ({ method: 'DELETE', url: `/v1/cycles/${validFrom}`, headers })

t.test('[D54] DELETE /v1/cycles/{valid_from}: the cycle\'s rows go in one answer saying how many', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const res = await app.inject(withdraw('2026-10-15'))
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  t.strictSame(res.json(), { status: 'withdrawn', valid_from: '2026-10-15', valid_to: '2026-11-14', rows_removed: 5 })
  t.strictSame((await storedRows()).map((r) => r.valid_from).filter((v, i, all) => all.indexOf(v) === i), ['2026-08-15', '2026-09-15'])
  t.equal((await app.inject('/v1/cycles/2026-10-15')).statusCode, 404)
  t.strictSame((await app.inject('/v1/cycles')).json().map((c: { valid_from: string }) => c.valid_from), ['2026-09-15', '2026-08-15'])

  const again = await app.inject(withdraw('2026-10-15'))
  t.equal(again.statusCode, 404, 'a withdrawn cycle is unknown')
  t.strictSame(again.json(), { detail: 'No cycle starts on 2026-10-15.' })
})

t.test('[D54] the read cache is cleared: latest, the cycle list and the cycle itself stop showing it', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  // Fill the cache with answers that hold the cycle.
  t.equal((await app.inject('/v1/prices/latest')).json()[0].valid_from, '2026-10-15')
  t.equal((await app.inject('/v1/cycles')).json().length, 3)
  t.equal((await app.inject('/v1/cycles/2026-10-15')).statusCode, 200)
  t.equal((await app.inject(withdraw('2026-10-15'))).statusCode, 200)
  const latest = (await app.inject('/v1/prices/latest')).json() as Array<{ valid_from: string }>
  t.strictSame([...new Set(latest.map((p) => p.valid_from))], ['2026-09-15'], 'latest is the cycle before')
  t.equal((await app.inject('/v1/cycles')).json().length, 2)
  t.equal((await app.inject('/v1/cycles/2026-10-15')).statusCode, 404)
})

t.test('[D54] an unknown cycle is a 404 and removes nothing; a day that is not a date is a 422', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const before = await storedRows()
  const unknown = await app.inject(withdraw('2026-11-15'))
  t.equal(unknown.statusCode, 404)
  t.strictSame(unknown.json(), { detail: 'No cycle starts on 2026-11-15.' })
  t.equal(unknown.headers['cache-control'], 'no-store')
  t.equal((await app.inject(withdraw('2026-10-16'))).statusCode, 404, 'a day inside a cycle is not its start')

  const bad = await app.inject(withdraw('15-10-2026'))
  t.equal(bad.statusCode, 422)
  t.match(bad.json(), { detail: [{ loc: ['path', 'valid_from'] }] })
  t.equal((await app.inject(withdraw('2026-02-30'))).statusCode, 422)
  t.strictSame(await storedRows(), before)
})

t.test('[D54] the ingest token: missing or wrong is a 401 before anything is looked at, and nothing goes', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const before = await storedRows()
  const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong' }, { authorization: `Basic ${TOKEN}` }]
  for (const headers of attempts) {
    const res = await app.inject(withdraw('2026-10-15', headers))
    t.equal(res.statusCode, 401)
    t.strictSame(res.json(), { detail: INVALID_WITHDRAW_TOKEN })
    t.equal(res.headers['www-authenticate'], 'Bearer')
    t.equal(res.headers['cache-control'], 'no-store')
  }
  t.equal((await app.inject(withdraw('not-a-date', {}))).statusCode, 401, 'the token is checked before the date')
  t.strictSame(await storedRows(), before)
})

t.test('[D54] over a real socket: fetch withdraws, and the next read over HTTP no longer has the cycle', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  t.equal((await (await fetch(`${base}/v1/prices/latest`)).json() as Array<{ valid_from: string }>)[0]?.valid_from, '2026-10-15')

  const denied = await fetch(`${base}/v1/cycles/2026-10-15`, { method: 'DELETE', headers: { authorization: 'Bearer nope' } })
  t.equal(denied.status, 401)
  t.strictSame(await denied.json(), { detail: INVALID_WITHDRAW_TOKEN })

  const res = await fetch(`${base}/v1/cycles/2026-10-15`, { method: 'DELETE', headers: AUTH })
  t.equal(res.status, 200)
  t.strictSame(await res.json(), { status: 'withdrawn', valid_from: '2026-10-15', valid_to: '2026-11-14', rows_removed: 5 })
  const latest = await (await fetch(`${base}/v1/prices/latest`)).json() as Array<{ valid_from: string }>
  t.equal(latest.length, STORED.filter((p) => p.valid_from === '2026-09-15').length)
  t.ok(latest.every((p) => p.valid_from === '2026-09-15'))
})

// PostgreSQL only: on PGlite one process holds the database, so there is no other replica to tell
// (declared, not skipped: CI counts a skip as a failure).
if (backend === 'postgres') t.test('[D54] every replica stops serving the cycle before the answer (the notification, as an ingest)', async (t) => {
  const writer = await build(t, { config: { ingestToken: TOKEN } })
  const reader = await build(t, { config: { ingestToken: TOKEN } })
  await reader.ready()
  t.equal((await reader.inject('/v1/prices/latest')).json()[0].valid_from, '2026-10-15', 'the other replica has it cached')
  t.equal((await writer.inject(withdraw('2026-10-15'))).statusCode, 200)
  t.equal((await reader.inject('/v1/prices/latest')).json()[0].valid_from, '2026-09-15', 'and no longer serves it')
})

/** The D14 ingest lock, taken by another session (as a running ingest holds it) until `release()`. */
async function holdIngestLock (t: Test): Promise<{ release: () => Promise<void> }> {
  const holder = postgres(TEST_DATABASE_URL as string, { max: 1, onnotice: () => {} })
  let release = (): void => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  let taken = (): void => {}
  const lockTaken = new Promise<void>((resolve) => { taken = resolve })
  const holding = holder.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${INGEST_LOCK_KEY}::bigint)`
    taken()
    await released
  })
  t.teardown(async () => { release(); await holding.catch(() => {}); await holder.end() })
  await lockTaken
  return { release: async () => { release(); await holding; await holder.end() } }
}

/** Sessions waiting for the D14 lock (a bigint advisory key is stored as its two 32-bit halves). */
async function lockWaiters (): Promise<number> {
  const admin = postgres(TEST_DATABASE_URL as string, { max: 1, onnotice: () => {} })
  try {
    const [row] = await admin<Array<{ n: number }>>`SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'advisory' AND NOT granted AND ((classid::bigint << 32) | objid::bigint) = ${INGEST_LOCK_KEY}`
    return row?.n ?? 0
  } finally {
    await admin.end()
  }
}

/** The app with a withdrawal that waits `lockWaitMs` for its turn, on `database` (default: this file's). */
async function withLockWait (t: Test, lockWaitMs: number | undefined, database?: Database): Promise<FastifyInstance> {
  const db = database ?? await testDatabase()
  const config = testConfig({ ingestToken: TOKEN, authFailuresPerMinute: 1_000_000 })
  const plugins = servicePlugins({ config, database: db, rateLimitStore: new MemorySlidingWindowStore({ max: 1_000_000 }) })
    .map((p) => p.name === 'cycle-withdrawal-routes' && lockWaitMs !== undefined ? { ...p, options: { ...p.options, lockWaitMs } } : p)
  return await build(t, { config: { ingestToken: TOKEN }, database: db, plugins })
}

// PostgreSQL only: PGlite has one session, in which a withdrawal simply runs after the ingest
// before it (declared, not skipped: CI counts a skip as a failure).
if (backend === 'postgres') {
  t.test('[D64] a withdrawal sent while an ingest holds the lock waits for it, past the connection\'s lock_timeout, then withdraws', async (t) => {
    // A pool whose lock_timeout is 100 ms: the wait must not be bounded by it (D47's 5 s on the service's own).
    const own = await testDatabase()
    const options = postgresOptions({ url: TEST_DATABASE_URL, schema: own.schema, poolMax: 2 })
    const sql = postgres(TEST_DATABASE_URL as string, { ...options, connection: { ...options.connection, lock_timeout: 100 } })
    const database = postgresDatabase(sql, own.schema)
    t.teardown(async () => { await database.close() })
    const app = await withLockWait(t, undefined, database)

    const before = await lockWaiters()
    const lock = await holdIngestLock(t)
    let settled = false
    const answer = app.inject(withdraw('2026-10-15')).finally(() => { settled = true })
    for (let i = 0; i < 50 && await lockWaiters() === before; i++) await new Promise((resolve) => setTimeout(resolve, 50))
    t.ok(await lockWaiters() > before, 'the withdrawal waits for the lock')
    await new Promise((resolve) => setTimeout(resolve, 500)) // five times the connection's lock_timeout
    t.equal(settled, false, 'and is still waiting, not refused')

    await lock.release()
    const res = await answer
    t.equal(res.statusCode, 200)
    t.strictSame(res.json(), { status: 'withdrawn', valid_from: '2026-10-15', valid_to: '2026-11-14', rows_removed: 5 })
  })

  t.test('[D64] an ingest that holds the lock past the wait: 503 in the envelope with Retry-After, nothing removed', async (t) => {
    const app = await withLockWait(t, 600)
    const before = await storedRows()
    const lock = await holdIngestLock(t)
    const res = await app.inject(withdraw('2026-10-15'))
    t.equal(res.statusCode, 503)
    t.strictSame(res.json(), { detail: INGEST_RUNNING })
    t.strictSame(res.json(), { detail: 'An upload or another withdrawal is still running. Try again later.' })
    t.equal(res.headers['retry-after'], '60')
    t.equal(res.headers['cache-control'], 'no-store')
    await lock.release()
    t.strictSame(await storedRows(), before, 'nothing was removed')

    const again = await app.inject(withdraw('2026-10-15'))
    t.equal(again.statusCode, 200, 'once the lock is free the same request succeeds')
    t.equal(again.json().rows_removed, 5)
  })
}
