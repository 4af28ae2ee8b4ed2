import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type postgres from 'postgres'
import { sampleCsv, upload, type UploadResult } from './ingest-write.js'
import { memory, rawGet, resetPeak, runnerAddress, startService, stop, type Service } from './processes.js'
import type { LoadResult } from './protocol.js'
import { load, MIXED, unexpected, type LoadSettings } from './reads.js'
import { markdownTable, mb, median, ms, num } from './stats.js'

/** Is anything listening at the Redis URL's host:port? (No Redis client needed for that.) */
export async function reachable (url: string): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return await new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379), timeout: 1000 })
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => { socket.destroy(); resolve(false) })
  })
}

/** The latest sample cycle with every price `cents` higher: an ingest that changes prices. */
function bumpedCycle (cents: number): { csv: Buffer, nairobiSuper: number } {
  const lines = sampleCsv(1).csv.toString('utf8').trimEnd().split('\n')
  let nairobiSuper = Number.NaN
  const out = lines.map((line, i) => {
    if (i === 0) return line
    const cells = line.split(',')
    // Prices are the last three cells (a quoted town may itself hold commas).
    const prices = cells.splice(-3).map((p) => ((Math.round(Number(p) * 100) + cents) / 100).toFixed(2))
    if (cells[2] === 'Nairobi') nairobiSuper = Number(prices[0])
    return [...cells, ...prices].join(',')
  })
  return { csv: Buffer.from(out.join('\n') + '\n'), nairobiSuper }
}

/** How long until `service` serves the new price (ms), or undefined if not within `limitMs`. */
async function propagation (service: Service, expected: number, limitMs = 5000): Promise<number | undefined> {
  const start = performance.now()
  while (performance.now() - start < limitMs) {
    const r = await rawGet(`${service.url}/v1/prices/latest?town=Nairobi`, { 'x-forwarded-for': runnerAddress() })
    const [row] = r.status === 200 ? JSON.parse(r.body.toString('utf8')) as Array<{ super_petrol: number }> : []
    if (row?.super_petrol === expected) return performance.now() - start
    await sleep(25)
  }
  return undefined
}

interface Ingest { replica: string, result: UploadResult, otherSawItMs: number | undefined }

/**
 * --replicas: two replicas on one database and Redis, a mixed load over both, an ingest every 10 s;
 * reports 5xx (must be 0), each replica's RSS, and how soon the other replica serves the new prices.
 */
export async function benchReplicas (dbUrl: string, sql: postgres.Sql, redisUrl: string | undefined, seconds: number, s: LoadSettings, log: (m: string) => void): Promise<string> {
  const replicas = [await startService('replica-a', { databaseUrl: dbUrl }, redisUrl), await startService('replica-b', { databaseUrl: dbUrl }, redisUrl)]
  const [a, b] = replicas as [Service, Service]
  try {
    const [{ n } = { n: 0 }] = await sql<Array<{ n: number }>>`SELECT count(*)::int AS n FROM fuel_prices`
    if (n === 0) {
      log('replicas: loading ~100k rows through replica-a')
      const seeded = await upload(a.url, sampleCsv(430).csv)
      if (seeded.status !== 201) throw new Error(`seeding ingest answered ${seeded.status}: ${seeded.body.slice(0, 300)}`)
      await sql`VACUUM ANALYZE fuel_prices`.simple()
    }
    const rss = replicas.map((r) => ({ start: memory(r.pid).rss, middle: Number.NaN, end: Number.NaN, peak: Number.NaN, peakReset: resetPeak(r.pid) }))
    // Every 10 s, the first after 5 s; a --quick run still gets one.
    const every = Math.min(10, Math.max(1, Math.floor(seconds / 2))) * 1000
    log(`replicas: ${seconds} s mixed load on both, one ingest every ${every / 1000} s`)
    const half = Math.max(1, Math.round(s.connections / 2))
    // Disjoint address ranges for the two load processes running at once.
    const ipStart = s.ip.next
    const loads = replicas.map(async (r, i) => await load(r.url, MIXED, s, { durationSec: seconds, connections: half, ipStart: (ipStart + i * 2 ** 23) % 2 ** 24, statuses: true }))
    const t0 = performance.now()
    const middle = sleep(seconds * 500).then(() => { replicas.forEach((r, i) => { (rss[i] as { middle: number }).middle = memory(r.pid).rss }) })
    const ingests: Ingest[] = []
    for (let k = 0; every / 2 + k * every < seconds * 1000 - Math.min(2_000, every); k++) {
      await sleep(Math.max(0, t0 + every / 2 + k * every - performance.now()))
      const [target, other] = k % 2 === 0 ? [a, b] : [b, a]
      const { csv, nairobiSuper } = bumpedCycle(k + 1)
      const result = await upload(target.url, csv)
      // The ingesting replica first: if even it does not show the new price, the expectation is wrong.
      const ownMs = result.status === 201 ? await propagation(target, nairobiSuper) : undefined
      if (result.status === 201 && ownMs === undefined) throw new Error(`${target.name} does not serve the prices it just ingested`)
      ingests.push({ replica: target.name, result, otherSawItMs: result.status === 201 ? await propagation(other, nairobiSuper) : undefined })
    }
    const results: LoadResult[] = await Promise.all(loads)
    await middle
    s.ip.next = Math.max(...results.map((r) => r.ipNext)) % 2 ** 24
    replicas.forEach((r, i) => {
      const m = rss[i] as { end: number, peak: number, peakReset: boolean }
      const now = memory(r.pid)
      m.end = now.rss
      m.peak = m.peakReset ? now.hwm : Number.NaN
    })
    return report(replicas, results, rss, ingests, seconds, every / 1000, redisUrl)
  } finally {
    await Promise.all(replicas.map(async (r) => await stop(r.child)))
  }
}

interface Rss { start: number, middle: number, end: number, peak: number }

function report (replicas: Service[], results: LoadResult[], rss: Rss[], ingests: Ingest[], seconds: number, every: number, redisUrl: string | undefined): string {
  const fivexx = (r: LoadResult): number => Object.entries(r.statuses).filter(([c]) => c.startsWith('5')).reduce((t, [, n]) => t + n, 0)
  const rows = replicas.map((rep, i) => {
    const r = results[i] as LoadResult
    const m = rss[i] as Rss
    const other = unexpected({ ...r, statuses: Object.fromEntries(Object.entries(r.statuses).filter(([c]) => !c.startsWith('5'))) })
    return [rep.name, num(r.requests), num(r.rps), ms(r.p99), String(fivexx(r)), other ?? '0', mb(m.start), mb(m.middle), mb(m.end), Number.isNaN(m.peak) ? '—' : mb(m.peak)]
  })
  const total = results.reduce((t, r) => t + r.requests, 0)
  const total5xx = results.reduce((t, r) => t + fivexx(r), 0) + ingests.filter((i) => i.result.status >= 500).length
  rows.push(['**total**', num(total), num(results.reduce((t, r) => t + r.rps, 0)), '—', `${total5xx} ${total5xx === 0 ? '(met)' : '(**not met**: must be 0)'}`, '', '', '', '', ''])
  const ok = ingests.filter((i) => i.result.status === 201)
  const seen = ok.map((i) => i.otherSawItMs).filter((v): v is number => v !== undefined)
  const lines = [
    `## Scale-out: two replicas, ${seconds} s mixed load, one ingest per ${every} s`,
    '',
    markdownTable(['replica', 'requests', 'req/s', 'p99 ms', '5xx', 'other non-2xx', 'RSS start', 'RSS middle', 'RSS end', 'RSS peak'], rows),
    '',
    `- Rate limit store: ${redisUrl === undefined ? 'in memory per replica (Redis not reachable)' : `Redis at ${redisUrl} (shared)`}.`,
    `- Ingests: ${ingests.length} (${ingests.map((i) => `${i.replica.replace('replica-', '')}:${i.result.status}`).join(', ')}), median ${ms(median(ingests.map((i) => i.result.ms)))} ms.`,
    `- The other replica served the new prices after: ${ok.map((i) => i.otherSawItMs === undefined ? '**stale after 5 s**' : `${ms(i.otherSawItMs)} ms`).join(', ') || '—'}` +
    (seen.length < ok.length ? ` — ${ok.length - seen.length} of ${ok.length} ingests were not visible on the other replica within 5 s (its latest-prices cache was not invalidated).` : '.')
  ]
  const failed = ingests.filter((i) => i.result.status !== 201)
  if (failed.length > 0) lines.push(`- Failed ingests: ${failed.map((i) => `${i.replica} ${i.result.status} ${i.result.body.slice(0, 200)}`).join('; ')}`)
  return lines.join('\n')
}
