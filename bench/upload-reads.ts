import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type postgres from 'postgres'
import { sampleCsv, upload } from './ingest-write.js'
import { INGEST_TOKEN, runnerAddress, track, type Service } from './processes.js'
import { ms, num, percentile, type TableRow } from './stats.js'

/**
 * D57: what a large upload costs the readers. GET /v1/prices/latest is sent at a fixed pace
 * (open loop: each request is timed from when it was due, so a stalled server is not hidden by a
 * client waiting for it), first with the service idle, then while 100,190-row files are uploaded
 * one after another, each onto an empty table (TRUNCATE between them, as the ingest row does, so
 * every upload takes the COPY path). The row is the ratio of the two p99s; target ≤ 3. The reads
 * (paced-reads.mjs) and the uploads (upload-file.mjs) come from processes of their own, as readers
 * are not the uploader: sent from this one, the reads were timed by an event loop that building a
 * 4 MB upload held for up to 100 ms.
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
  /** The reading process's own event-loop delay. */
  loopP99Ms: number
  loopMaxMs: number
}

const PACED_READS = fileURLToPath(new URL('./paced-reads.mjs', import.meta.url))
const UPLOAD_FILE = fileURLToPath(new URL('./upload-file.mjs', import.meta.url))

/** A script's one JSON line, from a process that leads a session of its own. */
async function ownSession<T> (args: string[], until?: Promise<unknown>): Promise<T> {
  const child = track(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], detached: true }))
  let out = ''
  child.stdout?.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const exited = once(child, 'exit')
  if (until !== undefined) await until.finally(() => child.kill('SIGTERM'))
  const [code] = await exited as [number | null]
  if (code !== 0) throw new Error(`${args[0] ?? ''} exited with ${code}`)
  return JSON.parse(out) as T
}

/**
 * The readers and the uploader each run in a process that leads a session of its own, as they
 * would on machines of their own: Linux shares the CPU fairly between sessions first (autogroup),
 * and in the bench's session they would wait behind one another and the bench.
 */
async function paced (serviceUrl: string, everyMs: number, work: Promise<unknown> | number): Promise<Probe> {
  const url = new URL('/v1/prices/latest', serviceUrl).href
  if (typeof work === 'number') return await ownSession<Probe>([PACED_READS, url, String(everyMs), String(work)])
  return await ownSession<Probe>([PACED_READS, url, String(everyMs)], work)
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
  const dir = mkdtempSync(join(tmpdir(), 'bench-upload-'))
  const file = join(dir, 'prices.csv')
  writeFileSync(file, csv)
  const uploading = (async () => {
    for (let i = 0; i < s.uploads; i++) {
      await sql`TRUNCATE fuel_prices RESTART IDENTITY`
      const result = await ownSession<{ status: number, ms: number }>([UPLOAD_FILE, `${service.url}/v1/ingest/csv`, file, INGEST_TOKEN, runnerAddress()])
      statuses.push(result.status)
      uploadMs.push(result.ms)
    }
  })().finally(() => { rmSync(dir, { recursive: true, force: true }) })
  const busy = await paced(service.url, s.everyMs, uploading)
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
    service: `p99 ${ms(busyP99)} ms, max ${ms(busyMax)} ms (${num(busy.latencies.length)} reads during ${s.uploads} uploads of ${(Math.min(...uploadMs) / 1000).toFixed(2)}–${(Math.max(...uploadMs) / 1000).toFixed(2)} s; the reading process's own event-loop delay p99 ${ms(busy.loopP99Ms)} ms, max ${ms(busy.loopMaxMs)} ms)`,
    serviceP99: ms(busyP99),
    ceiling: `p99 ${ms(idleP99)} ms idle (${num(idle.latencies.length)} reads)`,
    ratio: busyP99 / idleP99,
    target: { op: '<=', value: 3 },
    ...(problems.length > 0 ? { problem: problems.join('; ') } : {})
  }
}
