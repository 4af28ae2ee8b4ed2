/**
 * `npm run seed`: loads a year of realistic sample prices (13 cycles × the 233 towns of
 * scripts/sample/towns.txt, the last cycle being the one active today in Kenya) into the
 * configured database (DATABASE_URL, or the embedded PGlite under DATA_DIR), through the same
 * parser and upsert as POST /v1/ingest/csv. Idempotent: a second run inserts nothing. Exits
 * non-zero on any failure.
 */
import { realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { ConfigError, loadConfig } from '../src/config.js'
import type { Database } from '../src/db/client.js'
import { openDatabase } from '../src/db/client.js'
import { migrateDatabase } from '../src/db/migrate.js'
import { cycleOf, todayInKenya } from '../src/domain/cycle.js'
import { cycleCsvBatches } from '../src/ingest/csv.js'
import { ingestBatches, type IngestOutcome } from '../src/db/ingest.js'
import { loadSampleTowns, sampleCycles } from './sample/generate.js'

export const SEED_CYCLES = 13

/** The sample cycles ending with the one active on `today`, ingested as one upload would be. */
export async function seedSampleData (database: Database, today = todayInKenya()): Promise<IngestOutcome> {
  const text = sampleCycles({ towns: loadSampleTowns(), cycles: SEED_CYCLES, lastValidFrom: cycleOf(today).validFrom })
  return await ingestBatches(database, cycleCsvBatches(text))
}

async function main (): Promise<number> {
  let database: Database | undefined
  try {
    const config = loadConfig()
    database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolMax: 1, statementTimeoutMs: config.dbStatementTimeoutMs })
    await migrateDatabase(database, config.databaseUrl)
    const outcome = await seedSampleData(database)
    const newest = outcome.cycles[0]
    const oldest = outcome.cycles.at(-1)
    console.log(`seeded ${database.kind === 'postgres' ? 'PostgreSQL' : `PGlite at ${config.dataDir}`}: ` +
      `${outcome.cycles.length} cycles (${oldest?.validFrom ?? '?'} to ${newest?.validTo ?? '?'}), ` +
      `${outcome.recordsProcessed} rows: ${outcome.inserted} inserted, ${outcome.updated} updated, ${outcome.unchanged} unchanged`)
    return 0
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : `seed failed: ${(err as Error).message}`)
    return 1
  } finally {
    await database?.close()
  }
}

// Run only as a script, not when a test imports seedSampleData.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  process.exitCode = await main()
}
