import t from 'tap'
import { build, testDatabase } from '../helper.js'
import type { Database } from '../../src/db/client.js'
import { PricesRepository } from '../../src/db/prices.js'

t.test('[D25] reachable database: 200 healthy, no-store, never rate limited', async (t) => {
  const app = await build(t, { rateLimitMax: 2 })
  for (let i = 0; i < 5; i++) {
    const res = await app.inject('/v1/health')
    t.equal(res.statusCode, 200)
    t.same(res.json(), { status: 'healthy' })
    t.equal(res.headers['cache-control'], 'no-store')
    t.equal(res.headers['ratelimit-limit'], undefined)
  }
})

t.test('[D25] a hanging database: 500 Database unreachable within 2 seconds', async (t) => {
  const app = await build(t)
  // The repository's ping never answers, as when PostgreSQL hangs behind a stalled network.
  app.prices.ping = async () => await new Promise<void>(() => {})
  const started = Date.now()
  const res = await app.inject('/v1/health')
  const elapsed = Date.now() - started
  t.equal(res.statusCode, 500)
  t.same(res.json(), { detail: 'Database unreachable' })
  t.equal(res.headers['cache-control'], 'no-store')
  t.ok(elapsed < 2000, `answered in ${elapsed} ms`)
})

t.test('[D25] a closed database: 500 Database unreachable', async (t) => {
  const shared = await testDatabase()
  const { openDatabase } = await import('../../src/db/client.js')
  const { migrateDatabase } = await import('../../src/db/migrate.js')
  const url = process.env.TEST_DATABASE_URL
  const own: Database = await openDatabase(url !== undefined && url !== '' ? { url, schema: shared.schema as string, poolMax: 1 } : { dataDir: 'memory://' })
  if (own.kind === 'pglite') await migrateDatabase(own)
  const app = await build(t, { database: own })
  t.equal((await app.inject('/v1/health')).statusCode, 200)
  await own.close()
  const res = await app.inject('/v1/health')
  t.equal(res.statusCode, 500)
  t.same(res.json(), { detail: 'Database unreachable' })
  t.type(app.prices, PricesRepository)
})
