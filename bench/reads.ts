import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type postgres from 'postgres'
import { CpuMeter } from './cpu.js'
import { pgbench, pricesPageSql, type PgbenchResult } from './pgbench.js'
import { rawGet, runnerAddress, startJsonServer, stop, type Service } from './processes.js'
import { ceilingKey, type LoadRequest, type LoadResult, type RecordedResponse } from './protocol.js'
import { cpuCell, ms, num, type TableRow } from './stats.js'
import { wrk } from './wrk.js'

export interface LoadSettings {
  connections: number
  durationSec: number
  warmupSec: number
  /** Service and ceiling runs alternate this many times; each keeps its best (interference only adds cost). */
  passes: number
  /** The same for the rows without a target, which only inform. */
  infoPasses: number
  /** Seconds of every HTTP scenario on each process before the first row. */
  processWarmupSec: number
  /** HTTP rows: processes of the floor and of the ceiling (and of the service, where the caller starts several). */
  processes: number
  /** Next X-Forwarded-For number; advanced by every load run so no address is reused. */
  ip: { next: number }
}

/** One wrk run; `statuses` counts the answers by status (soak and replicas). */
export async function load (url: string, requests: LoadRequest[], s: LoadSettings, run: { durationSec?: number, connections?: number, ipStart?: number, statuses?: boolean } = {}): Promise<LoadResult> {
  const result = await wrk({
    url,
    requests,
    connections: run.connections ?? s.connections,
    durationSec: run.durationSec ?? s.durationSec,
    ipStart: run.ipStart ?? s.ip.next,
    statuses: run.statuses
  })
  s.ip.next = result.ipNext % 2 ** 24
  return result
}

/** Answers other than the expected ones, errors and timeouts: the run did not measure what it says. */
export function unexpected (r: LoadResult, expected: number[] = [200]): string | undefined {
  const parts = Object.entries(r.statuses).filter(([code]) => !expected.includes(Number(code))).map(([code, n]) => `${n}×${code}`)
  if (Object.keys(r.statuses).length === 0 && r.non2xx3xx > 0) parts.push(`${r.non2xx3xx} non-2xx/3xx`)
  if (r.errors > 0) parts.push(`${r.errors} socket errors`)
  if (r.timeouts > 0) parts.push(`${r.timeouts} timeouts`)
  return parts.length > 0 ? parts.join(', ') : undefined
}

interface Measured { r: LoadResult, cpu: number }

/** The better of two runs: the one with more req/s, with the lower CPU per request of the two. */
function best (a: Measured | undefined, b: Measured): Measured {
  if (a === undefined) return b
  const faster = b.r.rps > a.r.rps ? b : a
  return { r: faster.r, cpu: Math.min(a.cpu, b.cpu) }
}

/** Warm-up (not measured), then a run with the server's CPU time read before and after. */
export async function measured (url: string, request: LoadRequest, s: LoadSettings, meter: CpuMeter): Promise<Measured> {
  if (s.warmupSec > 0) await load(url, [request], s, { durationSec: s.warmupSec })
  await meter.start()
  const r = await load(url, [request], s)
  return { r, cpu: await meter.stop() / r.requests }
}

const TOWN = 'Nairobi'

interface HttpScenario { name: string, request: (etag: string) => LoadRequest, expect: number, target?: number }

const HTTP: HttpScenario[] = [
  { name: 'latest, all towns', request: () => ({ path: '/v1/prices/latest' }), expect: 200, target: 0.85 },
  { name: 'latest, one town', request: () => ({ path: `/v1/prices/latest?town=${TOWN}` }), expect: 200 },
  { name: 'latest, 304 revalidation', request: (etag) => ({ path: '/v1/prices/latest', headers: { 'if-none-match': etag } }), expect: 304 },
  { name: 'latest, gzip', request: () => ({ path: '/v1/prices/latest', headers: { 'accept-encoding': 'gzip' } }), expect: 200 },
  { name: '/v1/towns', request: () => ({ path: '/v1/towns' }), expect: 200, target: 0.85 },
  { name: '/v1/prices?limit=100, repeated (read cache, D44)', request: () => ({ path: '/v1/prices?limit=100' }), expect: 200, target: 0.85 },
  { name: '/v1/cycles', request: () => ({ path: '/v1/cycles' }), expect: 200 },
  { name: '/v1/prices/changes', request: () => ({ path: '/v1/prices/changes' }), expect: 200 }
]

/** A distinct page per request (bench/fresh-client.lua fills in limit and offset): every one a cache miss. */
const COLD: LoadRequest = { path: '/v1/prices?limit={lim}&offset={off}' }

/** The soak and replica mix: mostly the latest cycle, some history pages, towns, cycles and changes. */
export const MIXED: LoadRequest[] = [
  { path: '/v1/prices/latest' },
  { path: `/v1/prices/latest?town=${TOWN}` },
  { path: '/v1/prices/latest', headers: { 'accept-encoding': 'gzip' } },
  { path: '/v1/prices/latest?town=Mombasa' },
  { path: '/v1/prices?limit=100' },
  { path: '/v1/prices?limit=100&town=Mombasa' },
  { path: '/v1/prices?limit=100&offset=1000' },
  { path: '/v1/prices?start_date=2020-01-15&end_date=2020-12-14&limit=1000' },
  { path: '/v1/towns' },
  { path: '/v1/cycles' },
  { path: '/v1/prices/changes' }
]

// Every header the service sent, so the ceiling sends the same bytes; node:http writes Date,
// Connection and Keep-Alive itself.
const NOT_REPLAYED = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'])

async function recordAll (service: Service): Promise<{ recorded: RecordedResponse[], requests: LoadRequest[] }> {
  let etag = ''
  const recorded: RecordedResponse[] = []
  const requests: LoadRequest[] = []
  for (const sc of HTTP) {
    const request = sc.request(etag)
    const r = await rawGet(service.url + request.path, { ...request.headers, 'x-forwarded-for': runnerAddress() })
    if (r.status !== sc.expect) throw new Error(`${sc.name} answered ${r.status}, expected ${sc.expect}: ${r.body.toString('utf8').slice(0, 300)}`)
    if (sc.expect === 200 && r.body.length < 3) throw new Error(`${sc.name} answered an empty body: no data to measure`)
    if (request.headers?.['accept-encoding'] === 'gzip' && r.headers['content-encoding'] !== 'gzip') throw new Error(`${sc.name} was not gzip-encoded`)
    etag ||= r.headers.etag ?? ''
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(r.headers)) if (!NOT_REPLAYED.has(name) && value !== undefined) headers[name] = value
    recorded.push({ key: ceilingKey(request.path, request.headers ?? {}), status: r.status, headers, bodyBase64: r.body.toString('base64') })
    requests.push(request)
  }
  return { recorded, requests }
}

const problems = (...list: Array<string | undefined>): { problem?: string } => {
  const text = list.filter((p) => p !== undefined).join('; ')
  return text === '' ? {} : { problem: text }
}

export interface ScenarioChoice {
  /** The scenarios run, by name (default: BENCH_HTTP_FILTER, else all). */
  only?: RegExp
  /** Appended to each row's name; such rows carry no target (they show a state, not the service). */
  infoSuffix?: string
}

/** Each HTTP scenario against the design-card floor and the bare node:http ceiling, run alternately.
 * D45 process state: pass i runs on the i-th process of each side (cycling), so each side's best
 * is its best process, not one process's draw. */
export async function httpScenarios (services: Service[], admin: postgres.Sql | undefined, s: LoadSettings, log: (m: string) => void, choice: ScenarioChoice = {}): Promise<TableRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'fuel-bench-'))
  const file = join(dir, 'recorded.json')
  const { recorded, requests } = await recordAll(services[0] as Service)
  const only = choice.only ?? (process.env.BENCH_HTTP_FILTER === undefined ? undefined : new RegExp(process.env.BENCH_HTTP_FILTER))
  writeFileSync(file, JSON.stringify(recorded))
  const started: Array<{ child: ChildProcess }> = []
  const sides = { ceilings: [] as Array<{ pid: number, url: string }>, floors: [] as Array<{ pid: number, url: string }> }
  const rows: TableRow[] = []
  try {
    for (let i = 0; i < s.processes; i++) {
      for (const [script, list] of [['ceiling-http.ts', sides.ceilings], ['floor-fastify.ts', sides.floors]] as const) {
        const server = await startJsonServer<{ port: number }>(script, file)
        started.push(server)
        list.push({ pid: server.child.pid as number, url: `http://127.0.0.1:${server.ready.port}` })
      }
    }
    // D45: a process's JIT settles over its first tens of seconds of load; every process of every
    // side serves all the scenarios first, so no row (the first least of all) measures a warm-up.
    if (s.processWarmupSec > 0) {
      log(`warm-up: ${s.processWarmupSec} s of every scenario on each process`)
      for (const server of [...services, ...sides.floors, ...sides.ceilings]) await load(server.url, requests, s, { durationSec: s.processWarmupSec })
    }
    for (const [i, sc] of HTTP.entries()) {
      if (only !== undefined && !only.test(sc.name)) continue
      log(sc.name + (choice.infoSuffix ?? ''))
      const request = requests[i] as LoadRequest
      let svc: Measured | undefined
      let ceil: Measured | undefined
      let floor: Measured | undefined
      const info = sc.target === undefined || choice.infoSuffix !== undefined
      const passes: string[] = []
      for (let pass = 0; pass < (info ? s.infoPasses : s.passes); pass++) {
        const service = services[pass % services.length] as Service
        const floorServer = sides.floors[pass % sides.floors.length] as { pid: number, url: string }
        const ceilingServer = sides.ceilings[pass % sides.ceilings.length] as { pid: number, url: string }
        const sv = await measured(service.url, request, s, new CpuMeter([service.pid], admin, service.databaseName))
        const fl = await measured(floorServer.url, request, s, new CpuMeter([floorServer.pid]))
        const ce = await measured(ceilingServer.url, request, s, new CpuMeter([ceilingServer.pid]))
        passes.push(`service ${num(sv.r.rps)} req/s ${cpuCell(sv.cpu)}, floor ${num(fl.r.rps)} ${cpuCell(fl.cpu)}, ` +
          `node:http ${num(ce.r.rps)} ${cpuCell(ce.cpu)}; vs floor ${(sv.r.rps / fl.r.rps).toFixed(2)} req/s, ${(fl.cpu / sv.cpu).toFixed(2)} CPU`)
        log(`  pass ${pass + 1}: ${passes[pass] ?? ''}`)
        svc = best(svc, sv)
        floor = best(floor, fl)
        ceil = best(ceil, ce)
      }
      if (svc === undefined || ceil === undefined || floor === undefined) throw new Error('BENCH_PASSES must be at least 1')
      const ceilingProblem = unexpected(ceil.r, [sc.expect])
      const floorProblem = unexpected(floor.r, [sc.expect])
      rows.push({
        scenario: sc.name + (choice.infoSuffix ?? ''),
        service: num(svc.r.rps),
        serviceCpu: cpuCell(svc.cpu),
        serviceP99: ms(svc.r.p99),
        ceiling: num(ceil.r.rps),
        ceilingCpu: cpuCell(ceil.cpu),
        ratio: svc.r.rps / ceil.r.rps,
        cpuRatio: ceil.cpu / svc.cpu,
        floor: { rps: num(floor.r.rps), cpu: cpuCell(floor.cpu), ratio: svc.r.rps / floor.r.rps, cpuRatio: floor.cpu / svc.cpu },
        ...(sc.target !== undefined && !info ? { target: { op: '>=' as const, value: sc.target } } : {}),
        passes,
        ...problems(unexpected(svc.r, [sc.expect]), ceilingProblem === undefined ? undefined : `ceiling: ${ceilingProblem}`,
          floorProblem === undefined ? undefined : `floor: ${floorProblem}`)
      })
    }
  } finally {
    for (const server of started) await stop(server.child)
    rmSync(dir, { recursive: true, force: true })
  }
  return rows
}

/** The service's read-cache counters (its /metrics; the bench leaves METRICS_TOKEN unset). */
async function cacheCounters (url: string): Promise<{ hits: number, misses: number }> {
  const text = (await rawGet(`${url}/metrics`, { 'x-forwarded-for': runnerAddress() })).body.toString('utf8')
  const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN)
  return { hits: value('fuel_read_cache_hits_total'), misses: value('fuel_read_cache_misses_total') }
}

/** Cold /v1/prices pages against pgbench running the service's SQL for the same pages on `pgUrl`,
 * alternating as the other rows do: pass i on the i-th service process, each side keeping its best. */
export async function coldPages (services: Service[], pgUrl: string, admin: postgres.Sql, s: LoadSettings, log: (m: string) => void): Promise<{ row: TableRow, sql: string }> {
  log('cold /v1/prices pages, against pgbench on the same pages')
  const first = services[0] as Service
  const ceiling = await pricesPageSql(pgUrl, first.url, first.databaseName !== undefined)
  let svc: Measured | undefined
  let ceil: PgbenchResult | undefined
  let ceilCpu = Number.POSITIVE_INFINITY
  let hits = 0
  let misses = 0
  const passes: string[] = []
  for (let pass = 0; pass < s.passes; pass++) {
    const service = services[pass % services.length] as Service
    const before = await cacheCounters(service.url)
    const meter = new CpuMeter([service.pid], admin, service.databaseName)
    const run = await measured(service.url, COLD, s, meter)
    const after = await cacheCounters(service.url)
    // The whole point of the row: every page (warm-up included) a read-cache miss.
    hits += after.hits - before.hits
    misses += after.misses - before.misses
    const serviceLine = `service ${num(run.r.rps)} req/s ${cpuCell(run.cpu)} (${cpuCell(meter.ownSeconds / run.r.requests)} in Node, the rest its PostgreSQL backends)`
    log(`  ${serviceLine}`)
    svc = best(svc, run)
    if (s.warmupSec > 0) await pgbench(pgUrl, ceiling.script, s.connections, s.warmupSec, admin)
    const p = await pgbench(pgUrl, ceiling.script, s.connections, s.durationSec, admin)
    passes.push(`${serviceLine}; pgbench ${num(p.tps)} tps ${cpuCell(p.cpuSeconds / p.transactions)}`)
    log(`  pgbench: ${num(p.tps)} tps, ${cpuCell(p.cpuSeconds / p.transactions)}`)
    if (ceil === undefined || p.tps > ceil.tps) ceil = p
    if (p.backendsVisible) ceilCpu = Math.min(ceilCpu, p.cpuSeconds / p.transactions)
  }
  if (svc === undefined || ceil === undefined) throw new Error('BENCH_PASSES must be at least 1')
  const visible = Number.isFinite(ceilCpu)
  return {
    row: {
      scenario: `/v1/prices cold page (limit 100-199, offset 0-999, a distinct one per request: ${num(misses)} cache misses, ${num(hits)} hits)` +
        (first.databaseName === undefined ? ' on PGlite, vs pgbench on PostgreSQL' : ''),
      service: num(svc.r.rps),
      serviceCpu: cpuCell(svc.cpu),
      serviceP99: ms(svc.r.p99),
      ceiling: `${num(ceil.tps)} (pgbench)`,
      ceilingCpu: visible ? cpuCell(ceilCpu) : '—',
      ratio: svc.r.rps / ceil.tps,
      ...(visible ? { cpuRatio: ceilCpu / svc.cpu } : {}),
      target: { op: '>=', value: 0.6 },
      passes,
      ...problems(unexpected(svc.r), hits > misses / 100 ? `${num(hits)} read-cache hits: not cold` : undefined)
    },
    sql: ceiling.script
  }
}
