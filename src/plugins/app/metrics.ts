import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { bearerAuth } from '../../http/bearer-auth.js'

/** What the app exposes to its own code: the ingest route counts its commits here. */
interface ServiceMetrics {
  /** This app's registry (not prom-client's global one), so apps in one process never clash. */
  readonly registry: Registry
  /** Committed ingests (the 201s of POST /v1/ingest/csv): `app.metrics.ingests.inc()`. */
  readonly ingests: Counter
  /** Data rows of committed ingests (`records_processed`): `app.metrics.rowsIngested.inc(n)`. */
  readonly rowsIngested: Counter
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ServiceMetrics
  }
}

interface MetricsPluginOptions {
  /** METRICS_TOKEN: when set, `/metrics` wants `Authorization: Bearer <token>`. */
  token?: string | undefined
}

const METRICS_PATH = '/metrics'
const INVALID_METRICS_TOKEN = 'Invalid authorization token for metrics endpoint.'

/** Request latency buckets, seconds: cache hits take well under a millisecond, ingests seconds. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * Process metrics (CPU, memory, event loop lag, GC) describe the process, not an app, and their
 * collectors install observers that are never removed; so one registry per process holds them,
 * and every app's /metrics answer adds it to its own.
 */
let processRegistry: Registry | undefined
function defaultMetricsRegistry (): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/**
 * Prometheus metrics at GET /metrics: requests by route pattern, method and status (a count and
 * a latency histogram), hits and misses of the latest-prices cache, ingests and ingested rows,
 * and the process metrics. Never rate limited, never cached (no-store, the app default).
 */
async function metrics (app: FastifyInstance, options: MetricsPluginOptions): Promise<void> {
  const registry = new Registry()
  const labelNames = ['method', 'route', 'status_code'] as const
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames,
    registers: [registry]
  })
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the start of a request to the end of its response, by method, route pattern and status code.',
    labelNames,
    buckets: LATENCY_BUCKETS,
    registers: [registry]
  })
  // Read from the cache's own tallies at scrape time (the cache is the one source of truth).
  const cache = app.readCache
  const tallies: Array<[name: string, help: string, read: () => number]> = [
    ['fuel_latest_cache_hits_total', 'GET /v1/prices/latest answers served from the in-memory cache.', () => cache.hits],
    ['fuel_latest_cache_misses_total', 'GET /v1/prices/latest answers that had to read the database.', () => cache.misses],
    ['fuel_read_cache_hits_total', 'Other cached reads (/v1/prices pages, /v1/towns) served from memory.', () => cache.bodyHits],
    ['fuel_read_cache_misses_total', 'Other cached reads that had to read the database.', () => cache.bodyMisses]
  ]
  for (const [name, help, read] of tallies) {
    new Counter({ name, help, registers: [registry], collect () { this.reset(); this.inc(read()) } })
  }
  new Gauge({
    name: 'fuel_read_cache_bytes',
    help: 'Bytes of the cached bodies besides the latest cycle (bounded by READ_CACHE_MAX_BYTES).',
    registers: [registry],
    collect () { this.set(cache.bytes) }
  })
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

  // One pair of label-bound children per (method, route, status): prom-client would otherwise
  // hash the label object on every request.
  const series = new Map<string, { count: ReturnType<typeof requests.labels>, time: ReturnType<typeof duration.labels> }>()
  app.addHook('onResponse', (request, reply, done) => {
    // The pattern, never the raw URL: one series per route, whatever clients request.
    const route = request.routeOptions.url ?? 'unmatched'
    const key = `${request.method} ${reply.statusCode} ${route}`
    let children = series.get(key)
    if (children === undefined) {
      const labels = { method: request.method, route, status_code: reply.statusCode }
      children = { count: requests.labels(labels), time: duration.labels(labels) }
      series.set(key, children)
    }
    children.count.inc()
    children.time.observe(reply.elapsedTime / 1000)
    done()
  })

  app.get(METRICS_PATH, {
    config: { rateLimit: false },
    onRequest: bearerAuth({ token: options.token, detail: INVALID_METRICS_TOKEN })
  }, async (_request, reply) => {
    const merged = Registry.merge([defaultMetricsRegistry(), registry])
    return await reply.type(merged.contentType).send(await merged.metrics())
  })
}

export default fp(metrics, { name: 'metrics', dependencies: ['read-cache'] })
