import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/client.js'
import { migrateDatabase } from '../src/db/migrate.js'
import { ablation } from './ablation.js'
import { benchCsvReader, csvReaderRow } from './csv-reader.js'
import { createBenchDatabase, type BenchDatabase } from './database.js'
import { benchIngest, benchIngestPglite, sampleCsv, upload, type IngestTiming } from './ingest-write.js'
import { soak, soakRows } from './memory.js'
import { memory, ROOT, startService, stop, stopAll, type Service, type Storage } from './processes.js'
import { coldPages, httpScenarios, type LoadSettings } from './reads.js'
import { benchReplicas, reachable } from './replicas.js'
import { sharedCacheRow } from './shared-cache.js'
import { uploadReadsRow, type UploadReadsSettings } from './upload-reads.js'
import { machine, machineLine, num, passesList, resultsTable, type TableRow } from './stats.js'
import { ensureWrk } from './wrk.js'

/**
 * `npm run bench` (`--pglite`, `--replicas`, `--ablation`, `--cache`, `--upload-reads-only`, `--quick`): the production
 * build, every figure paired with a ceiling measured in the same run on the same machine.
 */
const flags = new Set(process.argv.slice(2))
const quick = flags.has('--quick')
const pglite = flags.has('--pglite')
const replicasOnly = flags.has('--replicas-only') // development aid: skip the single-service part
const withReplicas = (flags.has('--replicas') || replicasOnly) && !pglite
// Load the data, then only the memory phase: for iterating on the service's footprint.
const soakOnly = flags.has('--soak-only')
// One upload, then only the HTTP rows (BENCH_HTTP_FILTER: a pattern on their names): for iterating on the read path.
const httpOnly = flags.has('--http-only')
// Only the shared-cache row (issue 47): one cycle, the latest prices through Varnish and straight from the service.
const cacheOnly = flags.has('--cache')
// Only the row of reads during large uploads (D57): the latest prices' p99 while 100k-row files go in, against idle.
const uploadReadsOnly = flags.has('--upload-reads-only')
const ingestOnly = flags.has('--ingest-only')

const positive = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`)
  return value
}
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const soakSeconds = positive('BENCH_SOAK_SECONDS', quick ? 3 : 60)
const repeat = positive('BENCH_INGEST_REPEAT', quick ? 1 : 5)
const settings: LoadSettings = {
  connections: positive('BENCH_CONNECTIONS', 32),
  durationSec: positive('BENCH_DURATION', quick ? 1 : 5),
  warmupSec: Number(process.env.BENCH_WARMUP ?? (quick ? 0 : 2)),
  processWarmupSec: Number(process.env.BENCH_PROCESS_WARMUP ?? (quick ? 0 : 20)),
  passes: positive('BENCH_PASSES', quick ? 1 : 10),
  infoPasses: positive('BENCH_INFO_PASSES', quick ? 1 : 3),
  // PGlite's data directory takes one process; the floor and the ceiling then get one each too.
  processes: pglite ? 1 : positive('BENCH_PROCESSES', quick ? 1 : 3),
  ip: { next: 0 }
}
const uploadReads: UploadReadsSettings = { idleSec: settings.durationSec, uploads: repeat, everyMs: positive('BENCH_UPLOAD_READS_EVERY_MS', 5) }

const BULK_STATE_SCENARIO = /^latest, all towns$/
const BULK_STATE_SUFFIX = ', in the process that took the bulk ingests (D45)'

const LEGEND = '**ratio req/s** = service req/s ÷ ceiling req/s; **ratio CPU/req** = ceiling CPU time per request ÷ service CPU time per request ' +
  '(utime + stime of /proc/<pid>/stat over the run ÷ requests; the service\'s PostgreSQL backends count as the service\'s); for both, 1 = as fast or as ' +
  'cheap as the ceiling and a `≥` target applies to both. Ingest rows: service time ÷ COPY time; reads during uploads: their p99 ÷ the same reads\' p99 idle; CSV reader: its rows/s ÷ papaparse\'s alone; RSS rows: RSS ÷ limit (lower is better).'

const log = (message: string): void => { process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`) }

const wrkVersion = ensureWrk(log)
if (flags.has('--ablation')) {
  // Each per-request plugin's share of GET /v1/prices/latest; needs no PostgreSQL.
  const loadStart = loadavg()[0] ?? Number.NaN
  const table = await ablation(settings, positive('BENCH_ABLATION_PASSES', quick ? 1 : 2), log)
  const text = [
    `# Benchmark: plugin ablation${quick ? ' (--quick: a smoke run, figures meaningless)' : ''}`,
    machineLine(machine('not used')),
    `Load: ${wrkVersion.split(' [')[0] ?? 'wrk'}, \`wrk -t1 -c${settings.connections}\`, ${settings.durationSec} s per run after ${settings.warmupSec} s warm-up, ` +
    `a fresh X-Forwarded-For per request. Load average (1 min): ${loadStart.toFixed(2)} at start, ${loadavg()[0]?.toFixed(2) ?? '?'} at end.`,
    table
  ].join('\n\n') + '\n'
  process.stdout.write(text)
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true })
  writeFileSync(join(ROOT, 'bench-results', 'ablation.md'), text)
  await stopAll()
  process.exit(0)
}
const db = await createBenchDatabase(adminUrl)
log(`database ${db.name}${pglite ? ' (ceilings only; the service runs on PGlite)' : ''}`)
let dataDir: string | undefined
let cleaning: Promise<void> | undefined
let interrupted = false
const cleanup = async (): Promise<void> => {
  cleaning ??= (async () => {
    await stopAll()
    await db.drop().catch((err: unknown) => log(`could not drop ${db.name}: ${String(err)}`))
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
  })()
  await cleaning
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true
    log(`${signal}: cleaning up`)
    void cleanup().finally(() => process.exit(130))
  })
}

const loadStart = loadavg()[0] ?? Number.NaN
try {
  const sections = [
    `# Benchmark${pglite ? ': the service on the embedded PGlite (--pglite)' : ''}${quick ? ' (--quick: a smoke run, figures meaningless)' : ''}`,
    machineLine(machine(db.postgresVersion)),
    `Load: ${wrkVersion.split(' [')[0] ?? 'wrk'}, \`wrk -t1 -c${settings.connections}\`, ${settings.durationSec} s per run after ${settings.warmupSec} s warm-up, ` +
    'a fresh X-Forwarded-For per request (bench/fresh-client.lua); the same for the service, its floor and its ceiling. ' +
    `HTTP rows: ${settings.passes} runs (info rows: ${settings.infoPasses}) each of the service, the floor and the ceiling, alternating, spread over ${settings.processes} fresh process${settings.processes === 1 ? '' : 'es'} of each (one each for the bulk-ingest row), each process first warmed by ${settings.processWarmupSec} s of every scenario; the cold page: ${settings.passes} of the service and of pgbench, alternating; ` +
    'each side\'s best (most req/s, least CPU per request) is reported. ' +
    `SQL ceiling: \`pgbench -M prepared -c ${settings.connections} -j 1\`.`
  ]
  let table = ''
  if (cacheOnly) {
    const row = await sharedCacheRow({ databaseUrl: db.url }, db.name, db.sql, settings, log)
    sections.push(passesSection([row]))
    table = `## Results (--cache)\n\n${LEGEND}\n\n${resultsTable([row])}`
  } else if (uploadReadsOnly) {
    table = await rowsOfOneService('upload-reads', async (service) => [await uploadReadsRow(service, db.sql, uploadReads, log)])
  } else if (ingestOnly) {
    table = await rowsOfOneService('ingest', async (service) => {
      log(`ingest: ~20k and ~100k rows, ${repeat}× each, against COPY`)
      return ingestRows(await benchIngest(service.url, db.sql, repeat))
    })
  } else if (!replicasOnly) {
    const single = await singleService(db)
    sections.push(single.notes)
    table = single.table
  }
  if (withReplicas) {
    const redis = await reachable(redisUrl) ? redisUrl : undefined
    sections.push(await benchReplicas(db.url, db.sql, redis, soakSeconds, settings, log))
  }
  // The cores may be shared: say how busy they were (absolute figures move with it, ratios much less).
  sections.splice(3, 0, `Load average (1 min) of the machine: ${loadStart.toFixed(2)} at start, ${loadavg()[0]?.toFixed(2) ?? '?'} at end.`)
  if (table !== '') sections.push(table)
  const text = sections.join('\n\n') + '\n'
  process.stdout.write(text)
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true })
  const out = join('bench-results', cacheOnly ? 'shared-cache.md' : pglite ? 'latest-pglite.md' : 'latest.md')
  writeFileSync(join(ROOT, out), text)
  log(`written to ${out}`)
} catch (err) {
  // After Ctrl-C the children die first and their runners fail: that is not the bench failing.
  if (!interrupted) log(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
  process.exitCode = 1
} finally {
  await cleanup()
}

/** A mode of one kind of row (`--upload-reads-only`, `--ingest-only`): one service on PostgreSQL, its rows' table. */
async function rowsOfOneService (mode: string, measure: (service: Service) => Promise<TableRow[]>): Promise<string> {
  const service = await startService(`service-${mode}`, { databaseUrl: db.url })
  try {
    return `## Results (--${mode}-only)\n\n${LEGEND}\n\n${resultsTable(await measure(service))}`
  } finally {
    await stop(service.child)
  }
}

async function singleService (bench: BenchDatabase): Promise<{ notes: string, table: string }> {
  let storage: Storage = { databaseUrl: bench.url }
  if (pglite) {
    dataDir = mkdtempSync(join(tmpdir(), 'fuel-bench-pglite-'))
    storage = { dataDir }
    // A fresh PGlite's initdb can outlast the plugin timeout on a busy machine: create and migrate it here.
    const store = await openDatabase({ dataDir })
    await migrateDatabase(store)
    await store.close()
    // The PostgreSQL side only holds the ceilings' tables: the service's schema, by its migrations.
    const pg = await openDatabase({ url: bench.url, poolMax: 1 })
    await migrateDatabase(pg, bench.url)
    await pg.close()
  }
  // In process, before any service runs: nothing else of the bench competes for the cores.
  const rows: TableRow[] = []
  if (!httpOnly) {
    log('CSV reader: the 20,038-row file, against papaparse alone')
    rows.push(csvReaderRow(benchCsvReader(quick ? 3 : undefined)))
  }
  const service = await startService('service', storage)
  let sql = ''
  let afterIngest
  let bulkState: TableRow[] = []
  try {
    if (httpOnly) {
      const loaded = await upload(service.url, sampleCsv(430).csv)
      if (loaded.status !== 201) throw new Error(`ingest answered ${loaded.status}: ${loaded.body.slice(0, 500)}`)
    } else {
      log(pglite ? 'ingest on PGlite: ~20k then ~100k rows, against COPY on PostgreSQL' : `ingest: ~20k and ~100k rows, ${repeat}× each, against COPY`)
      const ingest = pglite ? await benchIngestPglite(service.url, bench.sql) : await benchIngest(service.url, bench.sql, repeat)
      rows.push(...ingestRows(ingest))
      // On PGlite the database itself runs on the service's thread: the row is PostgreSQL's.
      if (!pglite && ingest !== undefined) rows.push(await uploadReadsRow(service, bench.sql, uploadReads, log))
    }
    // The steady state of a table autovacuum has seen; plans must not depend on the timing of that.
    await bench.sql`VACUUM ANALYZE fuel_prices`.simple()
    afterIngest = memory(service.pid)
    // D45: a process that parsed bulk uploads serves more slowly; shown, beside the fresh process's rows.
    if (!soakOnly) bulkState = await httpScenarios([service], bench.sql, { ...settings, processes: 1 }, log, { only: BULK_STATE_SCENARIO, infoSuffix: BULK_STATE_SUFFIX })
  } finally {
    await stop(service.child)
  }
  // The reads' targets: fresh processes on the loaded data, as replicas serve after a restart.
  if (!soakOnly) {
    const readers: Service[] = []
    try {
      for (let i = 0; i < settings.processes; i++) readers.push(await startService(`service-reads-${i + 1}`, storage))
      const reads = await httpScenarios(readers, bench.sql, settings, log)
      // Each bulk-state row beside its fresh-process twin.
      for (const row of bulkState) reads.splice(reads.findIndex((r) => `${r.scenario}${BULK_STATE_SUFFIX}` === row.scenario) + 1, 0, row)
      rows.push(...reads)
      // --http-only: the cold row too when BENCH_HTTP_FILTER names it.
      if (!httpOnly || /cold/.test(process.env.BENCH_HTTP_FILTER ?? '')) {
        const cold = await coldPages(readers, bench.url, bench.sql, settings, log)
        rows.push(cold.row)
        sql = cold.sql
      }
      if (httpOnly) return { notes: passesSection(rows), table: `## Results (--http-only)\n\n${LEGEND}\n\n${resultsTable(rows)}` }
      // Issue 47, information: what a shared cache in front takes off a replica.
      if (!pglite) rows.push(await sharedCacheRow(storage, bench.name, bench.sql, settings, log))
    } finally {
      for (const reader of readers) await stop(reader.child)
    }
  }
  // The memory target: a fresh serving process on the loaded data, mixed load with monthly ingests.
  const fresh = await startService('service-soak', storage)
  try {
    const idle = memory(fresh.pid).rss
    // Every 10 s; a --quick soak still gets one.
    const monthly = { csv: sampleCsv(1).csv, everySeconds: Math.min(10, Math.max(1, Math.floor(soakSeconds / 2))) }
    log(`memory: ${soakSeconds} s mixed load on a fresh service, a 233-row ingest every ${monthly.everySeconds} s`)
    rows.push(...soakRows(await soak(fresh, settings, soakSeconds, monthly), soakSeconds, monthly.everySeconds, pglite, { idle, afterIngest: afterIngest.rss, afterIngestPeak: afterIngest.hwm }))
  } finally {
    await stop(fresh.child)
  }
  const notes = [
    'HTTP rows: the targets apply to the design-card floor (bench/floor-fastify.ts: bare Fastify with @fastify/cors and @fastify/rate-limit registered as the service registers them, one route sending the bytes the service sent); ' +
    'the ceiling is a bare node:http server (bench/ceiling-http.ts) sending the same bytes and headers (all but Date and the connection headers). Other ceilings: ' +
    `cold /v1/prices pages → pgbench running the service's own SQL (captured from src/db/prices.ts through Drizzle's logger, its answer checked equal to the service's)${pglite ? ' on PostgreSQL holding the same rows' : ''}; ` +
    'CSV reader → papaparse alone on the same text with the reader\'s options, no validation (in process, alternating, the fastest of each); ' +
    `ingest → COPY of the same CSV bytes into \`CREATE TABLE … (LIKE fuel_prices INCLUDING ALL)\`${pglite ? ' on PostgreSQL' : ` (${repeat} uploads alternating with ${repeat} COPYs; the fastest of each)`}.`,
    ...(sql === '' ? [] : ['pgbench script:\n\n```sql\n' + sql + '```']),
    passesSection(rows)
  ]
  return { notes: notes.join('\n\n'), table: `## Results${pglite ? ' (PGlite)' : ''}\n\n${LEGEND}\n\n${resultsTable(rows)}` }
}

function passesSection (rows: TableRow[]): string {
  return `## Passes\n\nEach run of the alternating rows, in order (the table keeps each side's best):\n\n${passesList(rows)}`
}

function ingestRows (timings: IngestTiming[] | undefined): TableRow[] {
  if (timings === undefined) {
    return [{ scenario: 'ingest 20,038 rows', service: 'not available (404)', serviceP99: '—', ceiling: '—', ratio: undefined, target: { op: '<=', value: 1.3 } }]
  }
  return timings.map((t, i) => ({
    scenario: `ingest ${num(t.rows)} rows (${(t.bytes / 1024 / 1024).toFixed(1)} MB CSV)${pglite ? ' on PGlite' : ''}, ${t.onto}`,
    service: `${(t.serviceMs / 1000).toFixed(2)} s (${num(t.rows / t.serviceMs * 1000)} rows/s)`,
    serviceP99: '—',
    ceiling: `${(t.copyMs / 1000).toFixed(2)} s (COPY)`,
    ratio: t.serviceMs / t.copyMs,
    // Only the 20,038-row file on PostgreSQL has a target; the 100k one shows how the ingest scales.
    ...(i === 0 && !pglite ? { target: { op: '<=' as const, value: 1.3 } } : {})
  }))
}
