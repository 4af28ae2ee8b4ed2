import postgres from 'postgres'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import type { FastifyInstance } from 'fastify'
import { servicePlugins } from '../../src/app.js'
import { postgresDatabase, type Database } from '../../src/db/client.js'
import { postgresOptions } from '../../src/db/postgres/options.js'
import { INGEST_LOCK_KEY } from '../../src/db/locks.js'
import { MemorySlidingWindowStore } from '../../src/rate-limit/memory-store.js'
import { INGEST_RUNNING } from '../../src/read-cache/invalidation.js'
import { AUTH, csv, HEADER, TOKEN, storedRows, upload } from '../fixtures/ingest.js'
import { build, postgresOnly, testConfig, testDatabase, TEST_DATABASE_URL } from '../helper.js'
import { seedFixture } from '../routes/_fixtures.js'

/**
 * A withdrawal waits for the ingest lock as an ingest does (D64): PostgreSQL only, as PGlite has
 * one session, in which a withdrawal simply runs after the transaction before it.
 */

// The fixture: cycles 2026-08-15, 2026-09-15 and 2026-10-15 (the latest) of five towns.
t.beforeEach(seedFixture)

const withdraw = (validFrom: string, headers: Record<string, string> = AUTH): { method: 'DELETE', url: string, headers: Record<string, string> } =>
  ({ method: 'DELETE', url: `/v1/cycles/${validFrom}`, headers })

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

/** The app with a withdrawal and an ingest that wait `lockWaitMs` for their turn, on `database` (default: this file's). */
async function withLockWait (t: Test, lockWaitMs: number | undefined, database?: Database): Promise<FastifyInstance> {
  const db = database ?? await testDatabase()
  const config = testConfig({ ingestToken: TOKEN, authFailuresPerMinute: 1_000_000 })
  const plugins = servicePlugins({ config, database: db, rateLimitStore: new MemorySlidingWindowStore({ max: 1_000_000 }) })
    .map((p) => ['cycle-withdrawal-routes', 'ingest-routes'].includes(p.name) && lockWaitMs !== undefined ? { ...p, options: { ...p.options, lockWaitMs } } : p)
  return await build(t, { config: { ingestToken: TOKEN }, database: db, plugins })
}

t.test('[D64] a withdrawal sent while an ingest holds the lock waits for it, past the connection\'s lock_timeout, then withdraws', postgresOnly, async (t) => {
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

t.test('[D64] an ingest that holds the lock past the wait: 503 in the envelope with Retry-After, nothing removed', postgresOnly, async (t) => {
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

t.test('[D64] an ingest that finds the lock held past its wait: the same 503 with Retry-After, nothing written', postgresOnly, async (t) => {
  const app = await withLockWait(t, 600)
  const file = csv(HEADER, '15-11-2026,14-12-2026,Nairobi,190.00,180.00,160.00', '15-11-2026,14-12-2026,Kisumu,191.00,181.00,161.00')
  const before = await storedRows()
  const lock = await holdIngestLock(t)
  const start = performance.now()
  const res = await upload(app, file)
  t.ok(performance.now() - start >= 600, 'it waited its turn first')
  t.equal(res.statusCode, 503)
  t.strictSame(res.json(), { detail: 'An upload or another withdrawal is still running. Try again later.' })
  t.equal(res.headers['retry-after'], '60')
  t.equal(res.headers['cache-control'], 'no-store')
  await lock.release()
  t.strictSame(await storedRows(), before, 'nothing was written')

  const again = await upload(app, file)
  t.equal(again.statusCode, 201, 'once the lock is free the same upload is stored')
  t.equal(again.json().inserted, 2)
})
