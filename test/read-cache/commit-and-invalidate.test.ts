import { readdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import { notifyPricesChanged } from '../../src/db/channels.js'
import { NOTIFY_WAIT_MS } from '../../src/read-cache/invalidation.js'
import { build, testDatabase } from '../helper.js'
import { seedFixture } from '../routes/_fixtures.js'
import { raiseOctober } from './_writes.js'

/**
 * app.commitAndInvalidate, the one way a write that changes what readers see is made: the write
 * runs, and only once it committed is the read cache cleared, its notification heard back, the
 * shared cache purged of the cycles it changed and the write counted. The ingest and withdrawal
 * routes' own tests (test/routes/ingest*, cycles-withdraw, test/cache-purge/purge,
 * test/postgres/notifications) hold them to it end to end.
 */

// The fixture: cycles 2026-08-15, 2026-09-15 and 2026-10-15 (the latest) of five towns.
t.beforeEach(seedFixture)

/** A shared cache that records the Surrogate-Key of each PURGE it is sent. */
async function fakeSharedCache (t: Test): Promise<{ url: string, purged: string[] }> {
  const purged: string[] = []
  const server = createServer((req: IncomingMessage, res) => {
    purged.push(`${req.method ?? ''} ${String(req.headers['surrogate-key'])}`)
    req.resume()
    res.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/purge`, purged }
}

/** The latest cycle the app answers with, and how many statements answering it sent to the database. */
async function latest (app: FastifyInstance): Promise<{ validFrom: string, statements: number }> {
  const database = await testDatabase()
  const before = database.statements()
  const res = await app.inject('/v1/prices/latest')
  return { validFrom: (res.json() as Array<{ valid_from: string }>)[0]?.valid_from ?? '', statements: database.statements() - before }
}

const LISTS = 'prices latest changes towns cycles feed'

t.test('a write through it refreshes the read cache, is heard back, purges its cycles once and is counted once', async (t) => {
  const cache = await fakeSharedCache(t)
  const app = await build(t, { config: { cachePurgeUrl: cache.url } })
  const first = (await app.inject('/v1/prices/latest')).json() as Array<{ super_petrol: number }>
  t.equal((await latest(app)).statements, 0, 'the latest prices are cached')

  const counted: number[] = []
  const start = performance.now()
  const updated = await app.commitAndInvalidate({
    run: raiseOctober,
    changedCycles: () => ['2026-10-15'],
    count: (rows) => { counted.push(rows) }
  })
  const elapsed = performance.now() - start
  t.equal(updated, 5, 'the write\'s own result is handed back')
  t.ok(elapsed < NOTIFY_WAIT_MS, `its notification was heard, not waited out (${Math.round(elapsed)} ms)`)
  t.strictSame(cache.purged, [`PURGE ${LISTS} cycle-2026-10-15`], 'one purge of the lists and the changed cycle')
  t.strictSame(counted, [5], 'counted once, with the result')

  t.strictSame(await latest(app), { validFrom: '2026-10-15', statements: 0 }, 'the write answered with the latest prices already reloaded')
  const raised = (await app.inject('/v1/prices/latest')).json() as Array<{ super_petrol: number }>
  const cents = (prices: Array<{ super_petrol: number }>): number[] => prices.map((p) => Math.round(p.super_petrol * 100))
  t.strictSame(cents(raised), cents(first).map((c) => c + 100), 'and shows the write')
})

t.test('a write that fails clears nothing, purges nothing, counts nothing and rethrows its own error', async (t) => {
  const cache = await fakeSharedCache(t)
  const app = await build(t, { config: { cachePurgeUrl: cache.url } })
  await app.inject('/v1/prices/latest')
  const refusal = new Error('the write was refused')
  let counted = 0
  await t.rejects(app.commitAndInvalidate({
    run: async (notifyPayload) => {
      const database = await testDatabase()
      await database.db.transaction(async (tx) => {
        await tx.execute(sql`DELETE FROM fuel_prices WHERE valid_from = '2026-10-15'`)
        await notifyPricesChanged(tx, database, notifyPayload)
        throw refusal // rolled back: nothing deleted, nothing notified
      })
    },
    changedCycles: () => ['2026-10-15'],
    count: () => { counted++ }
  }), refusal)
  t.strictSame(await latest(app), { validFrom: '2026-10-15', statements: 0 }, 'the cache still answers')
  t.strictSame(cache.purged, [])
  t.equal(counted, 0)
})

t.test('a write that changed nothing answers at once: no cache cleared, no purge, not counted', async (t) => {
  const cache = await fakeSharedCache(t)
  const app = await build(t, { config: { cachePurgeUrl: cache.url } })
  await app.inject('/v1/prices/latest')
  let counted = 0
  const start = performance.now()
  const result = await app.commitAndInvalidate({
    run: async () => undefined,
    changedCycles: () => [],
    count: () => { counted++ }
  })
  t.equal(result, undefined)
  t.ok(performance.now() - start < NOTIFY_WAIT_MS, 'no notification is waited for')
  t.strictSame(await latest(app), { validFrom: '2026-10-15', statements: 0 }, 'the cache still answers')
  t.strictSame(cache.purged, [])
  t.equal(counted, 0)
})

t.test('no other module clears the read cache, purges the shared cache or notifies the replicas', async (t) => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url))
  const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [])
  const calling = (pattern: RegExp): string[] => files(src).filter((f) => pattern.test(readFileSync(f, 'utf8'))).map((f) => relative(src, f)).sort()
  t.strictSame(calling(/readCache\.(clear|refreshLatest)\(/), ['read-cache/invalidation.ts'])
  t.strictSame(calling(/cachePurge\.changed\(/), ['read-cache/invalidation.ts'])
  t.strictSame(calling(/pg_notify/), ['db/channels.ts'])
  t.strictSame(calling(/notifyPricesChanged\(/), ['db/cycles.ts', 'db/ingest-write.ts'], 'the two writes notify through the one helper')
  t.strictSame(calling(/commitAndInvalidate\(/), ['routes/cycles/withdraw.ts', 'routes/ingest/index.ts'], 'and their routes commit through app.commitAndInvalidate')
})
