import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { rawGet, runJsonChild, runnerAddress, startJsonServer, stop, type RawResponse, type Service } from './processes.js'
import type { HttpVariants, LoadArgs, LoadRequest, LoadResult, RecordedResponse, SqlArgs, SqlResult, SqlScenario } from './protocol.js'
import { ms, num, type TableRow } from './stats.js'

export interface LoadSettings {
  connections: number
  durationSec: number
  warmupSec: number
  /** The service's DB_POOL_MAX, given to the raw SQL loop too. */
  poolMax: number
  /** Next X-Forwarded-For number; advanced by every load run so no address is reused. */
  ip: { next: number }
}

/** One autocannon run in its own process (load.ts); a scenario run by default, with warm-up. */
export async function load (url: string, requests: LoadRequest[], s: LoadSettings, run: { durationSec?: number, connections?: number, ipStart?: number } = {}): Promise<LoadResult> {
  const args: LoadArgs = {
    url,
    requests,
    connections: run.connections ?? s.connections,
    durationSec: run.durationSec ?? s.durationSec,
    // Long runs (soak, replicas) start on a warm service; scenarios get the same warm-up as their ceiling.
    warmupSec: run.durationSec === undefined ? s.warmupSec : 0,
    ipStart: run.ipStart ?? s.ip.next
  }
  const result = await runJsonChild<LoadResult>('load.ts', args)
  s.ip.next = result.ipNext % 2 ** 24
  return result
}

/** Responses other than the expected status, errors and timeouts: the run did not measure what it says. */
export function unexpected (r: LoadResult, expected: number[] = [200]): string | undefined {
  const parts = Object.entries(r.statuses).filter(([code]) => !expected.includes(Number(code))).map(([code, n]) => `${n}×${code}`)
  if (r.errors > 0) parts.push(`${r.errors} errors`)
  if (r.timeouts > 0) parts.push(`${r.timeouts} timeouts`)
  return parts.length > 0 ? parts.join(', ') : undefined
}

const TOWN = 'Nairobi'
// What a client would revalidate with; set once the identity answer is recorded.
let etag = ''

const LATEST: Array<{ name: string, variant: keyof HttpVariants, request: () => LoadRequest, expect: number, target?: number }> = [
  { name: 'latest, all towns', variant: 'all', request: () => ({ path: '/v1/prices/latest' }), expect: 200, target: 0.6 },
  { name: 'latest, one town', variant: 'town', request: () => ({ path: `/v1/prices/latest?town=${TOWN}` }), expect: 200 },
  { name: 'latest, 304 revalidation', variant: 'notModified', request: () => ({ path: '/v1/prices/latest', headers: { 'if-none-match': etag } }), expect: 304 },
  { name: 'latest, gzip', variant: 'gzip', request: () => ({ path: '/v1/prices/latest', headers: { 'accept-encoding': 'gzip' } }), expect: 200 }
]

const HISTORY: Array<{ name: string, path: string, scenario: SqlScenario, target?: number }> = [
  { name: '/v1/prices?limit=100', path: '/v1/prices?limit=100', scenario: { kind: 'prices', limit: 100, offset: 0 }, target: 0.5 },
  { name: `/v1/prices?limit=100&town=${TOWN}`, path: `/v1/prices?limit=100&town=${TOWN}`, scenario: { kind: 'prices', limit: 100, offset: 0, town: TOWN } },
  { name: '/v1/prices?limit=100&offset=50000', path: '/v1/prices?limit=100&offset=50000', scenario: { kind: 'prices', limit: 100, offset: 50000 } },
  { name: '/v1/towns', path: '/v1/towns', scenario: { kind: 'towns' } }
]

/**
 * A mix of what clients read, for the soak and the replica runs: mostly the latest cycle, some
 * history pages (not the deep offset: one 50,000-row scan per round would gate every connection
 * and leave the service idle), the towns.
 */
export const MIXED: LoadRequest[] = [
  { path: '/v1/prices/latest' },
  { path: `/v1/prices/latest?town=${TOWN}` },
  { path: '/v1/prices/latest', headers: { 'accept-encoding': 'gzip' } },
  { path: '/v1/prices/latest?town=Mombasa' },
  { path: '/v1/prices?limit=100' },
  { path: '/v1/prices?limit=100&town=Mombasa' },
  { path: '/v1/prices?limit=100&offset=1000' },
  { path: '/v1/prices?start_date=2020-01-15&end_date=2020-12-14&limit=1000' },
  { path: '/v1/towns' }
]

// The representation headers; per-request ones (date, request id, rate limit) are not replayed.
const REPLAYED = ['content-type', 'content-encoding', 'etag', 'vary', 'cache-control']

function record (r: RawResponse, expect: number, what: string): RecordedResponse {
  if (r.status !== expect) throw new Error(`${what} answered ${r.status}, expected ${expect}`)
  const headers: Record<string, string> = {}
  for (const name of REPLAYED) if (r.headers[name] !== undefined) headers[name] = r.headers[name]
  return { status: r.status, headers, bodyBase64: r.body.toString('base64') }
}

async function recordVariants (service: Service): Promise<HttpVariants> {
  const get = async (path: string, headers: Record<string, string> = {}): Promise<RawResponse> =>
    await rawGet(service.url + path, { ...headers, 'x-forwarded-for': runnerAddress() })
  const all = record(await get('/v1/prices/latest'), 200, 'latest')
  etag = all.headers.etag ?? ''
  const gzip = record(await get('/v1/prices/latest', { 'accept-encoding': 'gzip' }), 200, 'latest gzip')
  if (gzip.headers['content-encoding'] !== 'gzip') throw new Error('latest with accept-encoding: gzip was not gzip-encoded')
  return {
    all,
    town: record(await get(`/v1/prices/latest?town=${TOWN}`), 200, 'latest one town'),
    gzip,
    notModified: record(await get('/v1/prices/latest', { 'if-none-match': etag }), 304, 'latest revalidation')
  }
}

const rps = (r: { rps: number }): string => num(r.rps)

/** Each latest variant against the bare node:http server replaying its bytes. */
export async function latestScenarios (service: Service, s: LoadSettings, log: (m: string) => void): Promise<TableRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'fuel-bench-'))
  const file = join(dir, 'variants.json')
  writeFileSync(file, JSON.stringify(await recordVariants(service)))
  const { child, ready } = await startJsonServer<{ port: number }>('ceiling-http.ts', file)
  const rows: TableRow[] = []
  try {
    for (const sc of LATEST) {
      log(sc.name)
      const svc = await load(service.url, [sc.request()], s)
      const ceil = await load(`http://127.0.0.1:${ready.port}`, [sc.request()], s)
      const ceilingProblem = unexpected(ceil, [sc.expect])
      const problem = [unexpected(svc, [sc.expect]), ceilingProblem === undefined ? undefined : `ceiling: ${ceilingProblem}`].filter((p) => p !== undefined).join('; ')
      rows.push({
        scenario: sc.name,
        service: rps(svc),
        serviceP99: ms(svc.p99),
        ceiling: rps(ceil),
        ceilingP99: ms(ceil.p99),
        ratio: svc.rps / ceil.rps,
        ...(sc.target !== undefined ? { target: { op: '>=' as const, value: sc.target } } : {}),
        ...(problem !== '' ? { problem } : {})
      })
    }
  } finally {
    await stop(child)
    rmSync(dir, { recursive: true, force: true })
  }
  return rows
}

/** Each history/towns path against the same SQL in a raw postgres.js loop (ceiling-sql.ts). */
export async function historyScenarios (service: Service, dbUrl: string, s: LoadSettings, log: (m: string) => void): Promise<{ rows: TableRow[], sql: string[] }> {
  const rows: TableRow[] = []
  const sql: string[] = []
  for (const sc of HISTORY) {
    log(sc.name)
    const svc = await load(service.url, [{ path: sc.path }], s)
    const args: SqlArgs = {
      dbUrl,
      scenario: sc.scenario,
      concurrency: s.connections,
      poolMax: s.poolMax,
      durationSec: s.durationSec,
      warmupSec: s.warmupSec,
      check: { serviceUrl: service.url, path: sc.path, forwardedFor: runnerAddress() }
    }
    const ceil = await runJsonChild<SqlResult>('ceiling-sql.ts', args)
    sql.push(`- ${sc.name}: \`${ceil.sqlText}\` ${JSON.stringify(ceil.params)}`)
    const problem = unexpected(svc)
    rows.push({
      scenario: sc.name,
      service: rps(svc),
      serviceP99: ms(svc.p99),
      ceiling: num(ceil.qps),
      ceilingP99: ms(ceil.p99),
      ratio: svc.rps / ceil.qps,
      ...(sc.target !== undefined ? { target: { op: '>=' as const, value: sc.target } } : {}),
      ...(problem !== undefined ? { problem } : {})
    })
  }
  return { rows, sql }
}
