import { upload } from './ingest-write.js'
import { memory, resetPeak, type Service } from './processes.js'
import { load, MIXED, unexpected, type LoadSettings } from './reads.js'
import type { LoadResult } from './protocol.js'
import { mb, ms, num, type TableRow } from './stats.js'

const MB = 1024 * 1024

/** Resident-memory limits (MiB, as /proc counts) on PostgreSQL and on the embedded PGlite. */
export const RSS_LIMITS = { postgres: { end: 150 * MB }, pglite: { end: 300 * MB, idle: 200 * MB } }

export interface Soak {
  load: LoadResult
  before: number
  end: number
  /** VmHWM over the soak only (reset at its start), or the highest 1 s sample if reset failed. */
  peak: number
  /** VmHWM over the whole life of the process, the 100k-row ingests included. */
  lifetimePeak: number
  samples: number[]
  ingests: number[]
  /** V8 heap used / total and external memory at the end, from the service's own /metrics. */
  heap: string
}

/** An admin's monthly upload (one cycle, 233 towns), made every `everySeconds` during the load. */
export interface PeriodicIngest { csv: Buffer, everySeconds: number }

/** A long mixed load (latest, history, towns) while the service's RSS is sampled from /proc. */
export async function soak (service: Service, s: LoadSettings, seconds: number, ingest?: PeriodicIngest): Promise<Soak> {
  const before = memory(service.pid)
  const reset = resetPeak(service.pid)
  const samples: number[] = []
  const ingests: Array<Promise<number>> = []
  const timer = setInterval(() => { samples.push(memory(service.pid).rss) }, 1000)
  const uploader = ingest === undefined
    ? undefined
    : setInterval(() => { ingests.push(upload(service.url, ingest.csv).then((r) => r.status, () => 0)) }, ingest.everySeconds * 1000)
  let result: LoadResult
  try {
    result = await load(service.url, MIXED, s, { durationSec: seconds, statuses: true })
  } finally {
    clearInterval(timer)
    if (uploader !== undefined) clearInterval(uploader)
  }
  const end = memory(service.pid)
  const heap = await heapOf(service.url)
  return {
    load: result,
    before: before.rss,
    end: end.rss,
    peak: reset ? end.hwm : Math.max(end.rss, ...samples),
    lifetimePeak: Math.max(before.hwm, end.hwm),
    samples,
    ingests: await Promise.all(ingests),
    heap
  }
}

/** `idle`: RSS right after start; `afterIngest`: the process that took the ~100k-row backfill (informational). */
export function soakRows (r: Soak, seconds: number, everySeconds: number, pglite: boolean, earlier: { idle: number, afterIngest: number, afterIngestPeak: number }): TableRow[] {
  const limits: { end: number, idle?: number } = pglite ? RSS_LIMITS.pglite : RSS_LIMITS.postgres
  const row = (scenario: string, bytes: number, limit: number, target?: boolean): TableRow => ({
    scenario, service: mb(bytes), serviceP99: '—', ceiling: `${mb(limit)} (limit)`, ratio: bytes / limit, ...(target === true ? { target: { op: '<=' as const, value: 1 } } : {})
  })
  const problem = unexpected(r.load) ?? (r.ingests.every((status) => status === 201) ? undefined : `ingests during the load: ${r.ingests.join(', ')}`)
  const store = pglite ? 'PGlite' : 'PostgreSQL'
  return [
    row(`RSS after the ~100k-row ingests (that process, ${store})`, earlier.afterIngest, limits.end),
    row('RSS peak of that process (VmHWM, 100k-row ingest included)', earlier.afterIngestPeak, limits.end),
    row(`RSS idle, fresh service on the loaded ${store} data`, earlier.idle, limits.idle ?? limits.end, limits.idle !== undefined),
    {
      scenario: `mixed load ${seconds} s (latest, history, towns, cycles, changes; a 233-row ingest every ${everySeconds} s: ${r.ingests.length} × ${[...new Set(r.ingests)].join('/')})`,
      service: num(r.load.rps),
      serviceP99: ms(r.load.p99),
      ceiling: '—',
      ratio: undefined,
      ...(problem !== undefined ? { problem } : {})
    },
    row(`RSS at end of the ${seconds} s load (start ${mb(r.before)}; ${r.heap})`, r.end, limits.end, true),
    row('RSS peak during that load (VmHWM)', r.peak, limits.end)
  ]
}

async function heapOf (url: string): Promise<string> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text()
    const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN)
    return `heap ${mb(value('nodejs_heap_size_used_bytes'))} used of ${mb(value('nodejs_heap_size_total_bytes'))}, external ${mb(value('nodejs_external_memory_bytes'))}`
  } catch {
    return 'heap unknown'
  }
}
