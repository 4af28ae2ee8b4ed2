import t from '../support/file-test.js'
import { build, insertPrices, resetData, testDatabase } from '../helper.js'
import { cycleOf, todayInKenya } from '../../src/domain/cycle.js'
import type { Database } from '../../src/db/client.js'
import { PricesRepository } from '../../src/db/prices.js'
import { HEALTH_PING_TIMEOUT_MS } from '../../src/routes/health/index.js'
import { pgliteTemplate } from '../support/pglite-template.js'

t.test('[D25] reachable database: 200 healthy, no-store, never rate limited', async (t) => {
  await resetData()
  const app = await build(t, { rateLimitMax: 2 })
  for (let i = 0; i < 5; i++) {
    const res = await app.inject('/v1/health')
    t.equal(res.statusCode, 200)
    t.strictSame(res.json(), { status: 'healthy', latest_valid_from: null, current_cycle_loaded: false })
    t.equal(res.headers['cache-control'], 'no-store')
    t.equal(res.headers['ratelimit-limit'], undefined)
  }
})

t.test('[D25] a hanging database: 500 Database unreachable within 2 seconds', async (t) => {
  const app = await build(t)
  // The freshness query never answers, as when PostgreSQL hangs behind a stalled network.
  app.cycles.freshness = async () => await new Promise<never>(() => {})
  const started = Date.now()
  const res = await app.inject('/v1/health')
  const elapsed = Date.now() - started
  t.equal(res.statusCode, 500)
  t.same(res.json(), { detail: 'Database unreachable' })
  t.equal(res.headers['cache-control'], 'no-store')
  // The 2 s bound is the ping's own timer plus the answer; the timer is what the test proves fired
  // (not a timed test: on a loaded machine the event loop may add lag after it).
  t.equal(HEALTH_PING_TIMEOUT_MS, 1500, 'leaves 0.5 s of the 2 s to answer')
  t.ok(elapsed >= HEALTH_PING_TIMEOUT_MS - 20, `answered after the ping's timeout (${elapsed} ms)`)
})

t.test('[D25] a closed database: 500 Database unreachable', async (t) => {
  const shared = await testDatabase()
  const { createPglite, openDatabase, pgliteDatabase } = await import('../../src/db/client.js')
  const url = process.env.TEST_DATABASE_URL
  // A database of its own to close: on PGlite a copy of the migrated template, not a new initdb.
  const own: Database = url !== undefined && url !== ''
    ? await openDatabase({ url, schema: shared.schema as string, poolMax: 1 })
    : await pgliteDatabase(await createPglite('memory://', { loadDataDir: await pgliteTemplate() }))
  const app = await build(t, { database: own })
  t.equal((await app.inject('/v1/health')).statusCode, 200)
  await own.close()
  const res = await app.inject('/v1/health')
  t.equal(res.statusCode, 500)
  t.same(res.json(), { detail: 'Database unreachable' })
  t.type(app.prices, PricesRepository)
})

t.test('[D42] health adds the latest cycle and whether the cycle covering today in Kenya is stored', async (t) => {
  await resetData()
  const app = await build(t)
  const today = cycleOf(todayInKenya())
  const [year, month] = today.validFrom.split('-').map(Number) as [number, number]
  const earlier = cycleOf(`${month === 1 ? year - 1 : year}-${String(month === 1 ? 12 : month - 1).padStart(2, '0')}-20`)
  await insertPrices([{ town: 'Nairobi', superPetrol: '180.00', diesel: '170.00', kerosene: '150.00', validFrom: earlier.validFrom }])
  t.strictSame((await app.inject('/v1/health')).json(), { status: 'healthy', latest_valid_from: earlier.validFrom, current_cycle_loaded: false })
  await insertPrices([{ town: 'Nairobi', superPetrol: '181.00', diesel: '170.00', kerosene: '150.00', validFrom: today.validFrom }])
  t.strictSame((await app.inject('/v1/health')).json(), { status: 'healthy', latest_valid_from: today.validFrom, current_cycle_loaded: true })
  await resetData()
})

t.test('[D42] today in Kenya is UTC+3: 21:00 UTC on the 14th is already the 15th there', async (t) => {
  t.equal(todayInKenya(new Date('2026-10-14T20:59:59Z')), '2026-10-14')
  t.equal(todayInKenya(new Date('2026-10-14T21:00:00Z')), '2026-10-15')
  t.equal(cycleOf(todayInKenya(new Date('2026-10-14T21:00:00Z'))).validFrom, '2026-10-15')
})
