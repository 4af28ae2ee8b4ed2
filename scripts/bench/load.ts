import autocannon, { type Result } from 'autocannon'
import { forwardedFor, type LoadArgs, type LoadResult } from './protocol.js'

/**
 * The load generator, in its own process so that it never competes with the runner's event loop.
 * Every request carries a fresh X-Forwarded-For: the service (TRUST_PROXY=true) keys its 60/min
 * limit on it, so the limiter does its full work per request but never answers 429.
 */
const args = JSON.parse(process.argv[2] ?? '{}') as LoadArgs
let next = args.ipStart

async function run (durationSec: number): Promise<Result> {
  return await autocannon({
    url: args.url,
    connections: args.connections,
    pipelining: 1,
    duration: durationSec,
    requests: args.requests.map((r) => ({
      method: r.method ?? 'GET',
      path: r.path,
      headers: r.headers ?? {},
      // Called for every request; autocannon rebuilds the request bytes after it.
      setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'x-forwarded-for': forwardedFor(next++) } })
    }))
  })
}

// Same warm-up for the service and the bare-http ceiling: JIT and connection set-up excluded.
if (args.warmupSec > 0) await run(args.warmupSec)
const result = await run(args.durationSec)
const statuses: Record<string, number> = {}
for (const [code, { count }] of Object.entries(result.statusCodeStats)) statuses[code] = count
const out: LoadResult = {
  requests: result.requests.total,
  durationSec: result.duration,
  rps: result.requests.total / result.duration,
  p50: result.latency.p50,
  p99: result.latency.p99,
  statuses,
  errors: result.errors,
  timeouts: result.timeouts,
  ipNext: next
}
console.log(JSON.stringify(out))
