import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import postgres from 'postgres'
import type { Test } from 'tap'
import { buildApp, type BuildAppOptions } from '../src/app.js'
import { loadConfig, type Config } from '../src/config.js'
import { migrateDatabase } from '../src/db/migrate.js'
import { fuelPrices, type NewFuelPriceRow } from '../src/db/schema.js'
import { MemorySlidingWindowStore } from '../src/rate-limit/memory-store.js'
import { openCountingDatabase, type CountingDatabase } from './support/counting-database.js'
import { checkResponses } from './contract/openapi-validator.js'
import { pgliteTemplate } from './support/pglite-template.js'
import { sharedCompilers } from './support/shared-compilers.js'
import t, { currentFileTest } from './support/file-test.js'

/**
 * Tests run against the embedded PGlite by default and against real PostgreSQL when
 * TEST_DATABASE_URL is set (.ci/run does both). Each test file gets a database of its own: an
 * in-memory PGlite loaded from the migrated template (test/support/pglite-template.ts), or a fresh
 * schema on the server, dropped when the file ends.
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== ''
  ? process.env.TEST_DATABASE_URL
  : undefined

export const backend = TEST_DATABASE_URL === undefined ? 'pglite' : 'postgres'

/**
 * tap options for a test that only means something when the test database is PostgreSQL (COPY,
 * notifications between replicas): skipped with this reason on PGlite, never replaced there by a
 * weaker check. Such tests live in test/postgres/ and nowhere else (test/README.md); .ci/run runs
 * them in its PostgreSQL stage, where a skip fails the run.
 *
 *     t.test('[D46] …', postgresOnly, async (t) => { ... })
 */
export const postgresOnly: { skip: string | false } = {
  skip: backend === 'pglite' ? 'PostgreSQL only: runs when TEST_DATABASE_URL is set (.ci/run\'s PostgreSQL stage)' : false
}

const databases = new WeakMap<Test, Promise<CountingDatabase>>()

/** The database of the test file now running, made on its first use and closed when the file ends. */
export async function testDatabase (): Promise<CountingDatabase> {
  const file = currentFileTest()
  let database = databases.get(file)
  if (database === undefined) {
    database = createTestDatabase(file)
    databases.set(file, database)
  }
  return await database
}

async function createTestDatabase (file: Test): Promise<CountingDatabase> {
  if (TEST_DATABASE_URL === undefined) {
    // A copy of the migrated template: no initdb and no migrations in this file (test/README.md).
    const database = await openCountingDatabase({ dataDir: 'memory://', loadDataDir: await pgliteTemplate() })
    file.teardown(async () => { await database.close() })
    return database
  }
  const schema = `test_${process.pid}_${randomBytes(4).toString('hex')}`
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} })
  await admin.unsafe(`CREATE SCHEMA "${schema}"`)
  const database = await openCountingDatabase({ url: TEST_DATABASE_URL, schema, poolMax: 5 })
  await migrateDatabase(database, TEST_DATABASE_URL)
  file.teardown(async () => {
    await database.close()
    await admin.unsafe(`DROP SCHEMA "${schema}" CASCADE`)
    await admin.end()
  })
  return database
}

/** A config as the service would load it from this environment, with test overrides. */
export function testConfig (overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ LOG_LEVEL: 'silent' }), ...overrides }
}

export interface BuildOptions extends Partial<Omit<BuildAppOptions, 'config'>> {
  /** D22 allowance of the memory store the app gets (tests not about D22 never reach theirs). */
  rateLimitMax?: number
  /** Overrides of the config loaded from an empty environment. */
  config?: Partial<Config>
  /** false: do not check responses against openapi.yaml (only for tests of off-contract answers). */
  contract?: boolean
}

/** The app on this file's database, closed when the test ends (STYLE: build(t)). */
export async function build (test: Test, options: BuildOptions = {}): Promise<FastifyInstance> {
  // Tests that are not about D22 get an allowance they never reach.
  const max = options.rateLimitMax ?? 1_000_000
  const app = await buildApp({
    // Nor one of wrong tokens (D65).
    config: testConfig({ authFailuresPerMinute: 1_000_000, ...options.config }),
    database: options.database ?? await testDatabase(),
    rateLimitStore: options.rateLimitStore ?? new MemorySlidingWindowStore({ max }),
    logger: options.logger ?? false,
    plugins: options.plugins,
    schemaCompilers: sharedCompilers
  })
  test.teardown(async () => { await app.close() })
  // Every response of every test honours openapi.yaml for its operation and status.
  if (options.contract !== false) checkResponses(app, (v) => test.fail(`contract: ${v.method} ${v.route} ${v.status}: ${v.problem}`, { violation: v }))
  return app
}

/** Empties the table and restarts ids, so a test starts from a known state. */
export async function resetData (): Promise<void> {
  const database = await testDatabase()
  await database.db.execute('TRUNCATE fuel_prices RESTART IDENTITY' as never)
}

export type PriceFixture = Omit<NewFuelPriceRow, 'id' | 'validTo'> & { validTo?: string }

/** Inserts rows straight through Drizzle (bypassing ingest), valid_to derived by the cycle rule. */
export async function insertPrices (rows: PriceFixture[]): Promise<void> {
  const database = await testDatabase()
  const { cycleFrom } = await import('../src/domain/cycle.js')
  await database.db.insert(fuelPrices).values(rows.map((r) => ({
    ...r,
    validTo: r.validTo ?? (cycleFrom(r.validFrom)?.validTo as string)
  })))
}

export { t }
