/**
 * `npm run seed`: 13 sample cycles × 233 towns through the ingest's parser and upsert (idempotent),
 * or through the running service's POST /v1/ingest/csv when it holds the embedded database.
 */
import { realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { ConfigError, loadConfig, type Config } from '../src/config.js'
import type { Database } from '../src/db/client.js'
import { openDatabase } from '../src/db/client.js'
import { migrateDatabase } from '../src/db/migrate.js'
import { DataDirInUseError } from '../src/db/data-dir-lock.js'
import { cycleOf, todayInKenya } from '../src/domain/cycle.js'
import { cycleCsvBatches } from '../src/ingest/csv.js'
import type { IngestOutcome } from '../src/domain/price-rows.js'
import { writeBatches } from '../src/db/ingest-write.js'
import { startupErrorLine } from '../src/startup-errors.js'
import { defaultUrl, ingestUrl, refusalLines, whyUnreachable } from './ingest-cli.js'
import { loadSampleTowns, sampleCycles } from './sample/generate.js'

export const SEED_CYCLES = 13

/** The sample cycles ending with the one active on `today`, ingested as one upload would be. */
export async function seedSampleData (database: Database, today = todayInKenya()): Promise<IngestOutcome> {
  return await writeBatches(database, cycleCsvBatches(sampleText(today)))
}

function sampleText (today: string): string {
  return sampleCycles({ towns: loadSampleTowns(), cycles: SEED_CYCLES, lastValidFrom: cycleOf(today).validFrom })
}

/** The sample sent to the running service at `base` (its INGEST_TOKEN from `env`): its answer, as a line. */
export async function seedThroughService (base: string, env: Record<string, string | undefined>, today = todayInKenya()): Promise<string> {
  const form = new FormData()
  form.append('file', new Blob([sampleText(today)], { type: 'text/csv' }), 'sample.csv')
  const token = env.INGEST_TOKEN
  const url = ingestUrl(base, false)
  let res: Response
  try {
    res = await fetch(url, { method: 'POST', body: form, headers: token === undefined || token === '' ? {} : { authorization: `Bearer ${token}` } })
  } catch (err) {
    throw new Error(`cannot reach ${url}: ${whyUnreachable(err)}. The data directory is in use, by the service as it seems, so the ` +
      'sample goes through its ingest: set PORT (and HOST) to where the service listens, or stop it')
  }
  const text = await res.text()
  let body: { records_processed?: number, inserted?: number, updated?: number, unchanged?: number }
  try {
    body = JSON.parse(text)
  } catch {
    throw new Error(`${url} answered HTTP ${res.status} with a body that is not JSON, so it is not this service: ${text.slice(0, 200)}`)
  }
  if (res.status !== 201) throw new Error(`the running service at ${url} refused the sample:\n${refusalLines(res.status, body, text).join('\n')}`)
  return `seeded through the running service at ${base}: ${SEED_CYCLES} cycles, ${body.records_processed ?? 0} rows: ` +
    `${body.inserted ?? 0} inserted, ${body.updated ?? 0} updated, ${body.unchanged ?? 0} unchanged`
}

async function main (): Promise<number> {
  let database: Database | undefined
  let config: Config | undefined
  let viaService = false
  try {
    try {
      process.loadEnvFile('.env') // as the service does (D35)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    config = loadConfig()
    try {
      database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolMax: 1, statementTimeoutMs: config.dbStatementTimeoutMs })
    } catch (err) {
      if (!(err instanceof DataDirInUseError)) throw err
      viaService = true
      console.log(await seedThroughService(defaultUrl(process.env), process.env))
      return 0
    }
    await migrateDatabase(database, config.databaseUrl)
    const outcome = await seedSampleData(database)
    const newest = outcome.cycles[0]
    const oldest = outcome.cycles.at(-1)
    console.log(`seeded ${database.kind === 'postgres' ? 'PostgreSQL' : `PGlite at ${config.dataDir}`}: ` +
      `${outcome.cycles.length} cycles (${oldest?.validFrom ?? '?'} to ${newest?.validTo ?? '?'}), ` +
      `${outcome.recordsProcessed} rows: ${outcome.inserted} inserted, ${outcome.updated} updated, ${outcome.unchanged} unchanged`)
    return 0
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message)
      return 1
    }
    // A database that cannot be reached is named as the service's own start names it (D33).
    const why = viaService || config === undefined ? (err as Error).message : startupErrorLine(err, config).replace(/^Cannot start: /, '')
    console.error(`seed failed: ${why}`)
    return 1
  } finally {
    await database?.close()
  }
}

// Run only as a script, not when a test imports seedSampleData.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  process.exitCode = await main()
}
