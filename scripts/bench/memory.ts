import { memory, resetPeak, type Service } from './processes.js'
import { load, MIXED, unexpected, type LoadSettings } from './reads.js'
import type { LoadResult } from './protocol.js'
import { mb, ms, num, type TableRow } from './stats.js'

/** Issue "Performance": the service's resident memory stays under this (MiB, as /proc counts). */
export const RSS_CEILING = 150 * 1024 * 1024

export interface Soak {
  load: LoadResult
  before: number
  end: number
  /** VmHWM over the soak only (reset at its start), or the highest 1 s sample if reset failed. */
  peak: number
  /** VmHWM over the whole life of the process, the 100k-row ingests included. */
  lifetimePeak: number
  /** RSS once a second, to see whether it levels off. */
  samples: number[]
}

/** A long mixed load (latest, history, towns) while the service's RSS is sampled from /proc. */
export async function soak (service: Service, s: LoadSettings, seconds: number): Promise<Soak> {
  const before = memory(service.pid)
  const reset = resetPeak(service.pid)
  const samples: number[] = []
  const timer = setInterval(() => { samples.push(memory(service.pid).rss) }, 1000)
  let result: LoadResult
  try {
    result = await load(service.url, MIXED, s, { durationSec: seconds })
  } finally {
    clearInterval(timer)
  }
  const end = memory(service.pid)
  return {
    load: result,
    before: before.rss,
    end: end.rss,
    peak: reset ? end.hwm : Math.max(end.rss, ...samples),
    lifetimePeak: Math.max(before.hwm, end.hwm),
    samples
  }
}

/** `idle`: RSS right after start; `afterIngest`: after the ~100k-row ingests, before any read load. */
export function soakRows (r: Soak, seconds: number, earlier: { idle: number, afterIngest: number }): TableRow[] {
  const ratio = (bytes: number): number => bytes / RSS_CEILING
  const problem = unexpected(r.load)
  return [
    { scenario: 'RSS idle, right after start', service: mb(earlier.idle), serviceP99: '—', ceiling: mb(RSS_CEILING), ceilingP99: '—', ratio: ratio(earlier.idle) },
    { scenario: 'RSS after the ingests, before the read load', service: mb(earlier.afterIngest), serviceP99: '—', ceiling: mb(RSS_CEILING), ceilingP99: '—', ratio: ratio(earlier.afterIngest) },
    {
      scenario: `mixed load ${seconds} s (latest, history, towns)`,
      service: num(r.load.rps),
      serviceP99: ms(r.load.p99),
      ceiling: '—',
      ceilingP99: '—',
      ratio: undefined,
      ...(problem !== undefined ? { problem } : {})
    },
    { scenario: `RSS at end of the ${seconds} s load (start ${mb(r.before)})`, service: mb(r.end), serviceP99: '—', ceiling: mb(RSS_CEILING), ceilingP99: '—', ratio: ratio(r.end), target: { op: '<=', value: 1 } },
    { scenario: 'RSS peak during that load (VmHWM)', service: mb(r.peak), serviceP99: '—', ceiling: mb(RSS_CEILING), ceilingP99: '—', ratio: ratio(r.peak), target: { op: '<=', value: 1 } },
    { scenario: 'RSS peak over the whole run (100k-row ingest included)', service: mb(r.lifetimePeak), serviceP99: '—', ceiling: mb(RSS_CEILING), ceilingP99: '—', ratio: ratio(r.lifetimePeak) }
  ]
}
