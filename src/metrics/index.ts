import type { FastifyInstance, onResponseHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Registry } from 'prom-client'

/** What the app exposes to its own code: the ingest route counts its commits here. */
interface ServiceMetrics {
  /** This app's registry (not prom-client's global one), so apps in one process never clash. */
  readonly registry: Registry
  /** Committed ingests (the 201s of POST /v1/ingest/csv): `app.metrics.ingests.inc()`. */
  readonly ingests: Counter
  /** Data rows of committed ingests (`records_processed`): `app.metrics.rowsIngested.inc(n)`. */
  readonly rowsIngested: Counter
}

/** Records one answer: method, status code, milliseconds. */
export type Recorder = (method: string, status: number, ms: number) => void

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ServiceMetrics
  }
}

/** Request latency buckets, seconds: cache hits take well under a millisecond, ingests seconds. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * Process metrics (CPU, memory, event loop lag, GC) describe the process, not an app, and their
 * collectors install observers that are never removed; so one registry per process holds them,
 * and every app's /metrics answer adds it to its own.
 */
let processRegistry: Registry | undefined
export function defaultMetricsRegistry (): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/** One series of answered requests: its labels, count, latency sum and per-bucket counts. */
interface RequestSeries {
  readonly labels: { method: string, route: string, status_code: number }
  count: number
  sum: number
  /** Requests whose latency fell in each LATENCY_BUCKETS bucket (not cumulative; +Inf is `count`). */
  readonly buckets: number[]
}

/**
 * The per-request side of the HTTP metrics, kept in plain numbers and turned into Prometheus
 * samples only at scrape time: prom-client's own counter and histogram cost ~5 µs of CPU per
 * request under wrk (issue 12), this a map lookup and three additions.
 */
class RequestTallies {
  private readonly all: RequestSeries[] = []
  private readonly recorders = new Map<string, Recorder>()

  /** Records for one route pattern (`unmatched` for requests that match no route); one per pattern. */
  recorder (route: string): Recorder {
    let recorder = this.recorders.get(route)
    if (recorder === undefined) this.recorders.set(route, recorder = this.newRecorder(route))
    return recorder
  }

  private newRecorder (route: string): Recorder {
    // Keyed by method and status; a route answers with a handful of each.
    const own = new Map<string, Map<number, RequestSeries>>()
    return (method, status, ms) => {
      let byStatus = own.get(method)
      if (byStatus === undefined) own.set(method, byStatus = new Map())
      let series = byStatus.get(status)
      if (series === undefined) {
        series = { labels: { method, route, status_code: status }, count: 0, sum: 0, buckets: LATENCY_BUCKETS.map(() => 0) }
        byStatus.set(status, series)
        this.all.push(series)
      }
      const seconds = ms / 1000
      series.count++
      series.sum += seconds
      let i = 0
      while (i < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[i] as number)) i++
      if (i < LATENCY_BUCKETS.length) (series.buckets[i] as number)++
    }
  }

  /** The two families as prom-client metric objects, read when the registry is scraped. */
  register (registry: Registry): void {
    const family = (name: string, help: string, type: 'counter' | 'histogram', values: () => object[]): void => {
      registry.registerMetric({ name, help, type, aggregator: 'sum', get: () => ({ name, help, type, aggregator: 'sum', values: values() }) } as never)
    }
    family('http_requests_total', 'HTTP requests answered, by method, route pattern and status code.', 'counter',
      () => this.all.map((s) => ({ labels: s.labels, value: s.count })))
    family('http_request_duration_seconds', 'Time from the start of a request to the end of its response, by method, route pattern and status code.', 'histogram',
      () => this.all.flatMap((s) => {
        let cumulative = 0
        return [
          ...LATENCY_BUCKETS.map((le, i) => {
            cumulative += s.buckets[i] as number
            return { metricName: 'http_request_duration_seconds_bucket', labels: { le, ...s.labels }, value: cumulative }
          }),
          { metricName: 'http_request_duration_seconds_bucket', labels: { le: '+Inf', ...s.labels }, value: s.count },
          { metricName: 'http_request_duration_seconds_sum', labels: s.labels, value: s.sum },
          { metricName: 'http_request_duration_seconds_count', labels: s.labels, value: s.count }
        ]
      }))
  }
}

/**
 * `app.metrics`: requests by route pattern, method and status (a count and a latency histogram),
 * ingests and ingested rows, and what other plugins register in `app.metrics.registry` (the read
 * cache's hits and misses); GET /metrics (routes/metrics) exposes them with the process metrics.
 *
 * Registered before the routes it counts: each route gets its own onResponse hook as it is declared
 * (an `onRoute` hook), with its pattern already known, so no request reads `request.routeOptions`
 * (a getter that builds an object each time); requests that match no route are counted by an
 * app-level hook under `unmatched`.
 */
async function metrics (app: FastifyInstance): Promise<void> {
  const registry = new Registry()
  const tallies = new RequestTallies()
  tallies.register(registry)
  const ingests = new Counter({
    name: 'fuel_ingests_total',
    help: 'Committed CSV ingests.',
    registers: [registry]
  })
  const rowsIngested = new Counter({
    name: 'fuel_ingest_rows_total',
    help: 'Data rows of committed CSV ingests (each inserted, updated or unchanged).',
    registers: [registry]
  })
  app.decorate('metrics', { registry, ingests, rowsIngested })

  app.addHook('onRoute', (route) => {
    // The pattern, never the raw URL: one series per route, whatever clients request.
    const record = tallies.recorder(route.url)
    const hook: onResponseHookHandler = (request, reply, done) => {
      record(request.method, reply.statusCode, reply.elapsedTime)
      done()
    }
    // A new array: the implied HEAD route is declared from a copy of these options.
    const own = route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse]
    route.onResponse = [...own, hook]
  })
  const unmatched = tallies.recorder('unmatched')
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) unmatched(request.method, reply.statusCode, reply.elapsedTime)
    done()
  })
}

export default fp(metrics, { name: 'metrics' })
