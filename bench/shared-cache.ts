import { existsSync } from 'node:fs'
import type postgres from 'postgres'
import { startVarnish, VARNISHD_PATH } from '../test/support/varnish.js'
import { CpuMeter } from './cpu.js'
import { sampleCsv, upload } from './ingest-write.js'
import { rawGet, runnerAddress, startService, stop, type Storage } from './processes.js'
import { load, unexpected, type LoadSettings } from './reads.js'
import type { LoadRequest } from './protocol.js'
import { cpuCell, ms, num, type TableRow } from './stats.js'

/**
 * Issue 47's row (information): the latest prices through Varnish running deploy/varnish/default.vcl
 * against straight from the service, alternating, each side's best of `infoPasses` runs. Both
 * ask for gzip, as browsers do: Varnish keeps the gzip form and would unzip it per request for
 * a client that takes none. The CPU cells say what each request costs the replica (and its
 * PostgreSQL backends) and, through the cache, Varnish.
 */
const LATEST: LoadRequest = { path: '/v1/prices/latest', headers: { 'accept-encoding': 'gzip' } }

export async function sharedCacheRow (storage: Storage, databaseName: string | undefined, admin: postgres.Sql | undefined, s: LoadSettings, log: (m: string) => void): Promise<TableRow> {
  const scenario = 'latest, gzip, through Varnish (deploy/varnish/default.vcl) vs straight from the service'
  if (!existsSync(VARNISHD_PATH)) {
    return { scenario, service: `not measured: ${VARNISHD_PATH} missing (apt-get install varnish)`, serviceP99: '—', ceiling: '—', ratio: undefined }
  }
  const service = await startService('service-behind-cache', storage)
  const varnish = await startVarnish({ backendPorts: [Number(new URL(service.url).port)], storage: '256m' })
  try {
    const latest = await rawGet(`${service.url}/v1/prices/latest`, { 'x-forwarded-for': runnerAddress() })
    if (latest.status !== 200 || latest.body.toString() === '[]') {
      const loaded = await upload(service.url, sampleCsv(1).csv)
      if (loaded.status !== 201) throw new Error(`ingest answered ${loaded.status}: ${loaded.body.slice(0, 300)}`)
    }
    const measure = async (url: string, withCache: boolean): Promise<{ rps: number, p99: number, replicaCpu: number, cacheCpu: number, problem?: string }> => {
      if (s.warmupSec > 0) await load(url, [LATEST], s, { durationSec: s.warmupSec })
      // A meter per run: each keeps the first sample it took of a pid.
      const replica = new CpuMeter([service.pid], admin, databaseName)
      const cache = new CpuMeter(varnish.pids())
      const before = await varnish.counters()
      await replica.start()
      await cache.start()
      const r = await load(url, [LATEST], s)
      const replicaSeconds = await replica.stop()
      const cacheSeconds = await cache.stop()
      const after = await varnish.counters()
      const backendRequests = (after['MAIN.backend_req'] ?? 0) - (before['MAIN.backend_req'] ?? 0)
      const problem = unexpected(r) ?? (withCache && backendRequests > 0 ? `${backendRequests} requests reached the replica` : undefined)
      return { rps: r.rps, p99: r.p99, replicaCpu: replicaSeconds / r.requests, cacheCpu: withCache ? cacheSeconds / r.requests : 0, ...(problem === undefined ? {} : { problem }) }
    }
    let direct: Awaited<ReturnType<typeof measure>> | undefined
    let cached: Awaited<ReturnType<typeof measure>> | undefined
    const passes: string[] = []
    for (let i = 0; i < s.infoPasses; i++) {
      log(`shared cache: pass ${i + 1} of ${s.infoPasses}`)
      const d = await measure(service.url, false)
      const c = await measure(varnish.url, true)
      passes.push(`direct ${num(d.rps)} req/s (replica ${cpuCell(d.replicaCpu)}/req); through Varnish ${num(c.rps)} req/s (replica ${cpuCell(c.replicaCpu)}/req, Varnish ${cpuCell(c.cacheCpu)}/req)`)
      if (direct === undefined || d.rps > direct.rps) direct = d
      if (cached === undefined || c.rps > cached.rps) cached = c
    }
    if (direct === undefined || cached === undefined) throw new Error('no pass ran')
    const problem = [direct.problem, cached.problem].filter((p) => p !== undefined).join('; ')
    return {
      scenario,
      service: num(cached.rps),
      serviceCpu: `replica ${cpuCell(cached.replicaCpu)} + Varnish ${cpuCell(cached.cacheCpu)}`,
      serviceP99: ms(cached.p99),
      ceiling: `${num(direct.rps)} (direct)`,
      ceilingCpu: cpuCell(direct.replicaCpu),
      ratio: cached.rps / direct.rps,
      cpuRatio: direct.replicaCpu / (cached.replicaCpu + cached.cacheCpu),
      passes,
      ...(problem === '' ? {} : { problem })
    }
  } finally {
    await varnish.stop()
    await stop(service.child)
  }
}
