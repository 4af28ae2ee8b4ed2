import http from 'node:http'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type postgres from 'postgres'
import { sampleCsv, upload } from './ingest-write.js'
import { runnerAddress, type Service } from './processes.js'
import { ms, num, percentile, type TableRow } from './stats.js'

/**
 * D57: what a large upload costs the readers. GET /v1/prices/latest is sent at a fixed pace
 * (open loop: each request is timed from when it was due, so a stalled server is not hidden by a
 * client waiting for it), first with the service idle, then while 100,190-row files are uploaded
 * one after another, each onto an empty table (TRUNCATE between them, as the ingest row does, so
 * every upload takes the COPY path). The row is the ratio of the two p99s; target ≤ 3.
 */

export interface UploadReadsSettings {
  /** Seconds of reads with the service idle. */
  idleSec: number
  /** Uploads of the ~100k-row file, one after another, while the reads go on. */
  uploads: number
  /** Milliseconds between two reads (the pace, whatever the answers take). */
  everyMs: number
}

interface Probe {
  latencies: number[]
  failures: Record<string, number>
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

/** One read, timed from `due`; every request from its own client address, so the limiter never trips. */
function read (url: URL, due: number, probe: Probe): Promise<void> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent, headers: { 'x-forwarded-for': runnerAddress() } }, (res) => {
      res.resume()
      res.once('end', () => {
        if (res.statusCode === 200) probe.latencies.push(performance.now() - due)
        else probe.failures[String(res.statusCode)] = (probe.failures[String(res.statusCode)] ?? 0) + 1
        resolve()
      })
    })
    request.once('error', (err) => {
      probe.failures[err.message] = (probe.failures[err.message] ?? 0) + 1
      resolve()
    })
  })
}

/** Reads at a fixed pace until `work` settles (or for `seconds`), then waits for the last answers. */
async function paced (serviceUrl: string, everyMs: number, work: Promise<unknown> | number): Promise<Probe> {
  const url = new URL('/v1/prices/latest', serviceUrl)
  const probe: Probe = { latencies: [], failures: {} }
  const pending: Array<Promise<void>> = []
  let done = false
  const until = typeof work === 'number' ? new Promise((resolve) => setTimeout(resolve, work * 1000)) : work
  void until.finally(() => { done = true })
  const start = performance.now()
  for (let k = 0; !done; k++) {
    const due = start + k * everyMs
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    if (done) break
    pending.push(read(url, due, probe))
  }
  await Promise.all(pending)
  await until
  return probe
}

export async function uploadReadsRow (service: Service, sql: postgres.Sql, s: UploadReadsSettings, log: (m: string) => void): Promise<TableRow> {
  const { csv, rows } = sampleCsv(430)
  await sql`TRUNCATE fuel_prices RESTART IDENTITY`
  const loaded = await upload(service.url, csv)
  if (loaded.status !== 201) throw new Error(`ingest answered ${loaded.status}: ${loaded.body.slice(0, 500)}`)
  log(`reads during uploads: ${s.idleSec} s idle, then ${s.uploads} uploads of ${num(rows)} rows, GET /v1/prices/latest every ${s.everyMs} ms`)
  await paced(service.url, s.everyMs, 2) // the connections and the read cache warm
  const idle = await paced(service.url, s.everyMs, s.idleSec)
  const statuses: number[] = []
  const uploadMs: number[] = []
  const uploading = (async () => {
    for (let i = 0; i < s.uploads; i++) {
      await sql`TRUNCATE fuel_prices RESTART IDENTITY`
      const result = await upload(service.url, csv)
      statuses.push(result.status)
      uploadMs.push(result.ms)
    }
  })()
  // The reads are sent from this process, which also sends the uploads: its own stalls are shown beside the row.
  const runnerLoop = monitorEventLoopDelay({ resolution: 1 })
  runnerLoop.enable()
  const busy = await paced(service.url, s.everyMs, uploading)
  runnerLoop.disable()
  const idleP99 = percentile([...idle.latencies].sort((a, b) => a - b), 99)
  const busyP99 = percentile([...busy.latencies].sort((a, b) => a - b), 99)
  const busyMax = Math.max(...busy.latencies)
  const failures = { ...idle.failures, ...busy.failures }
  const problems = [
    ...statuses.filter((st) => st !== 201).map((st) => `an upload answered ${st}`),
    ...Object.entries(failures).map(([what, n]) => `${n} reads failed (${what})`)
  ]
  return {
    scenario: `latest all towns: p99 while ${num(rows)}-row files are uploaded, against idle (D57)`,
    service: `p99 ${ms(busyP99)} ms, max ${ms(busyMax)} ms (${num(busy.latencies.length)} reads during ${s.uploads} uploads of ${(Math.min(...uploadMs) / 1000).toFixed(2)}–${(Math.max(...uploadMs) / 1000).toFixed(2)} s; the bench's own event-loop delay p99 ${ms(runnerLoop.percentile(99) / 1e6)} ms)`,
    serviceP99: ms(busyP99),
    ceiling: `p99 ${ms(idleP99)} ms idle (${num(idle.latencies.length)} reads)`,
    ratio: busyP99 / idleP99,
    target: { op: '<=', value: 3 },
    ...(problems.length > 0 ? { problem: problems.join('; ') } : {})
  }
}
