import { finished } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Registry } from 'prom-client'
import { logAccess } from '../logging/access-log.js'

interface ServiceMetrics {
  /** This app's registry (not prom-client's global one), so apps in one process never clash. */
  readonly registry: Registry
  readonly ingests: Counter
  readonly rowsIngested: Counter
  /** The onSend hook of answers no route matched (the not-found handler's): one `unmatched` series. */
  readonly unmatchedHook: onSendHookHandler
  /** performance.now() when the latest request arrived: an upload's parse rests while others come. */
  readonly lastRequestAt: () => number
}

type LatencyRecorder = (method: string, status: number, ms: number) => void

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ServiceMetrics
  }
  interface FastifyRequest {
    /** performance.now() when the request reached Fastify's hooks; 0 if it never did. */
    startedAt: number
  }
}

/** Request latency buckets, seconds: cache hits take well under a millisecond, ingests seconds. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

// Process metrics' collectors are never removed: one registry per process, added to every app's answer.
let processRegistry: Registry | undefined
export function defaultMetricsRegistry (): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

interface RequestSeries {
  readonly labels: { method: string, route: string, status_code: number }
  count: number
  sum: number
  /** Requests whose latency fell in each LATENCY_BUCKETS bucket (not cumulative; +Inf is `count`). */
  readonly buckets: number[]
}

/** HTTP metrics kept as plain numbers and made into samples at scrape time, cheaper per request than prom-client's. */
class RequestTallies {
  private readonly all: RequestSeries[] = []
  private readonly recorders = new Map<string, LatencyRecorder>()

  recorder (route: string): LatencyRecorder {
    let recorder = this.recorders.get(route)
    if (recorder === undefined) this.recorders.set(route, recorder = this.newRecorder(route))
    return recorder
  }

  private newRecorder (route: string): LatencyRecorder {
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

/** Each answer is timed here, and its access line written with the same figure. */
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
  let lastRequestAt = 0
  app.decorate('metrics', { registry, ingests, rowsIngested, unmatchedHook: measureAnswer(tallies.recorder('unmatched')), lastRequestAt: () => lastRequestAt })

  app.decorateRequest('startedAt', 0)
  app.addHook('onRequest', (request, _reply, done) => {
    request.startedAt = lastRequestAt = performance.now()
    done()
  })
  app.addHook('onRoute', (route) => {
    // The pattern, never the raw URL: one series per route, whatever clients request.
    const hook = measureAnswer(tallies.recorder(route.url))
    // A new array: the implied HEAD route is declared from a copy of these options.
    const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]
    route.onSend = [...own, hook]
  })
}

/** Runs as the answer is handed to node:http (the last onSend hook), a stream at its end; not onResponse,
 * whose `finish` listener on every response costs each request (D45). */
function measureAnswer (record: LatencyRecorder): onSendHookHandler {
  const observe = (request: FastifyRequest, reply: FastifyReply, error?: Error | null): void => {
    const ms = request.startedAt === 0 ? 0 : performance.now() - request.startedAt
    record(request.method, reply.statusCode, ms)
    logAccess(request, reply, ms, error ?? undefined)
  }
  return (request, reply, payload, done) => {
    if (typeof (payload as { pipe?: unknown } | null)?.pipe === 'function') finished(reply.raw, (error) => { observe(request, reply, error) })
    else observe(request, reply)
    done(null, payload)
  }
}

export default fp(metrics, { name: 'metrics' })
