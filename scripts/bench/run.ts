import { mkdirSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { createBenchDatabase, type BenchDatabase } from './database.js'
import { benchIngest, sampleCsv, type IngestTiming } from './ingest.js'
import { soak, soakRows } from './memory.js'
import { memory, ROOT, startService, stop, stopAll } from './processes.js'
import { historyScenarios, latestScenarios, type LoadSettings } from './reads.js'
import { benchReplicas, reachable } from './replicas.js'
import { machine, machineLine, num, resultsTable, type TableRow } from './stats.js'

/**
 * `npm run bench` (issue "Performance" items 4–5; `--replicas`: issue "Scale-out" item 5).
 * The service under test is the production build (the `start` script of package.json) on a throw-away
 * PostgreSQL database; every number is paired with a ceiling measured in the same run on the
 * same machine, so the ratios mean something even on a small shared box.
 */
const flags = new Set(process.argv.slice(2))
const replicasOnly = flags.has('--replicas-only') // development aid: skip the single-service part
const withReplicas = flags.has('--replicas') || replicasOnly
// Load the data, then only the memory phase: for iterating on the service's footprint.
const soakOnly = flags.has('--soak-only')

const positive = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`)
  return value
}
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const soakSeconds = positive('BENCH_SOAK_SECONDS', 60)
const repeat = positive('BENCH_INGEST_REPEAT', 3)
const settings: LoadSettings = {
  connections: positive('BENCH_CONNECTIONS', 32),
  durationSec: positive('BENCH_DURATION', 10),
  warmupSec: Number(process.env.BENCH_WARMUP ?? 1),
  poolMax: positive('DB_POOL_MAX', 10), // what the service reads too (it inherits the environment)
  ip: { next: 0 }
}

const log = (message: string): void => { process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`) }

const db = await createBenchDatabase(adminUrl)
log(`database ${db.name}`)
let cleaning: Promise<void> | undefined
let interrupted = false
const cleanup = async (): Promise<void> => {
  cleaning ??= (async () => {
    await stopAll()
    await db.drop().catch((err: unknown) => log(`could not drop ${db.name}: ${String(err)}`))
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
  const m = machine(db.postgresVersion)
  const sections = [
    '# Benchmark',
    machineLine(m),
    `Load: autocannon in its own process, ${settings.connections} connections, pipelining 1, ${settings.durationSec} s per run after ${settings.warmupSec} s warm-up, ` +
    `a distinct X-Forwarded-For per request; service DB pool ${settings.poolMax} (the raw SQL loop gets the same pool and ${settings.connections} concurrent callers).`
  ]
  if (!replicasOnly) sections.push(await singleService(db))
  if (withReplicas) {
    const redis = await reachable(redisUrl) ? redisUrl : undefined
    sections.push(await benchReplicas(db.url, db.sql, redis, soakSeconds, settings, log))
  }
  // The cores may be shared (CI, other work): say how busy they were, since absolute numbers move
  // with that while the same-run ratios move much less.
  sections.splice(2, 0, `Load average (1 min) of the machine: ${loadStart.toFixed(2)} at start, ${loadavg()[0]?.toFixed(2) ?? '?'} at end.`)
  const text = sections.join('\n\n') + '\n'
  process.stdout.write(text)
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true })
  writeFileSync(join(ROOT, 'bench-results', 'latest.md'), text)
  log('written to bench-results/latest.md')
} catch (err) {
  // After Ctrl-C the children die first and their runners fail: that is not the bench failing.
  if (!interrupted) log(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
  process.exitCode = 1
} finally {
  await cleanup()
}

async function singleService (bench: BenchDatabase): Promise<string> {
  const service = await startService('service', bench.url)
  try {
    log(`ingest: ~20k and ~100k rows, ${repeat}× each, against COPY`)
    const ingest = await benchIngest(service.url, bench.sql, repeat)
    // The steady state of a table autovacuum has seen; plans must not depend on the timing of that.
    await bench.sql`VACUUM ANALYZE fuel_prices`.simple()
    const rows: TableRow[] = [...ingestRows(ingest)]
    const history = { sql: [] as string[] }
    if (!soakOnly) {
      rows.push(...await latestScenarios(service, settings, log))
      const measured = await historyScenarios(service, bench.url, settings, log)
      rows.push(...measured.rows)
      history.sql = measured.sql
    }
    const afterIngest = memory(service.pid)
    // The memory target is the steady state of a serving replica: a fresh process on the loaded
    // database, under a 60 s mixed load with the monthly-size ingest mixed in. The backfill
    // process above is reported beside it.
    await stop(service.child)
    const fresh = await startService('service-soak', bench.url)
    try {
      const idle = memory(fresh.pid).rss
      log(`memory: ${soakSeconds} s mixed load on a fresh service, a 233-row ingest every 10 s`)
      const monthly = { csv: sampleCsv(1).csv, everySeconds: 10 }
      rows.push(...soakRows(await soak(fresh, settings, soakSeconds, monthly), soakSeconds, { idle, afterIngest: afterIngest.rss, afterIngestPeak: afterIngest.hwm }))
    } finally {
      await stop(fresh.child)
    }
    return [
      resultsTable(rows),
      'Ceilings: latest → a bare node:http server replaying the service\'s bytes and representation headers; ' +
      'history/towns → the service\'s own SQL (captured from src/db/prices.ts through Drizzle\'s logger, rows checked equal to the service\'s answer) in a raw postgres.js loop; ' +
      'ingest → COPY of the same CSV bytes into a copy of fuel_prices with its indexes and CHECKs (median of ' + String(repeat) + ').',
      'SQL measured:\n' + history.sql.join('\n')
    ].join('\n\n')
  } finally {
    await stop(service.child)
  }
}

function ingestRows (timings: IngestTiming[] | undefined): TableRow[] {
  if (timings === undefined) {
    return [{ scenario: 'ingest ~20k rows', service: 'not available (404)', serviceP99: '—', ceiling: '—', ceilingP99: '—', ratio: undefined, target: { op: '<=', value: 2.5 } }]
  }
  return timings.map((t, i) => ({
    scenario: `ingest ${num(t.rows)} rows (${(t.bytes / 1024 / 1024).toFixed(1)} MB CSV), empty table`,
    service: `${(t.serviceMs / 1000).toFixed(2)} s (${num(t.rows / t.serviceMs * 1000)} rows/s)`,
    serviceP99: '—',
    ceiling: `${(t.copyMs / 1000).toFixed(2)} s (COPY)`,
    ceilingP99: '—',
    ratio: t.serviceMs / t.copyMs,
    // Only the ~20k file has a target; the 100k one shows how the ingest scales.
    ...(i === 0 ? { target: { op: '<=' as const, value: 2.5 } } : {})
  }))
}
