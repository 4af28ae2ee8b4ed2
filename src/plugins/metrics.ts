import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client'
import { HttpError } from '../domain/errors.js'

/** What the app exposes to its own code: the ingest route counts its commits here. */
export interface ServiceMetrics {
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

export interface MetricsPluginOptions {
  /** METRICS_TOKEN: when set, `/metrics` wants `Authorization: Bearer <token>`. */
  token?: string | undefined
}

export const METRICS_PATH = '/metrics'
export const INVALID_METRICS_TOKEN = 'Invalid authorization token for metrics endpoint.'

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

const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest()

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
  const cacheTally = (app: FastifyInstance, key: 'hits' | 'misses'): number =>
    app.hasDecorator('latestCache') ? app.latestCache[key] : 0
  new Counter({
    name: 'fuel_latest_cache_hits_total',
    help: 'GET /v1/prices/latest answers served from the in-memory cache.',
    registers: [registry],
    collect () { this.reset(); this.inc(cacheTally(app, 'hits')) }
  })
  new Counter({
    name: 'fuel_latest_cache_misses_total',
    help: 'GET /v1/prices/latest answers that had to read the database.',
    registers: [registry],
    collect () { this.reset(); this.inc(cacheTally(app, 'misses')) }
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

  const expected = options.token === undefined ? undefined : sha256(options.token)
  app.get(METRICS_PATH, {
    config: { rateLimit: false },
    onRequest: async (request) => {
      if (expected === undefined) return
      const match = /^bearer[ \t]+(.*)$/i.exec(request.headers.authorization ?? '')
      // Digests of equal length: a constant-time comparison whatever the token's length.
      if (match === null || !timingSafeEqual(sha256(match[1]?.trim() ?? ''), expected)) {
        throw new HttpError(401, INVALID_METRICS_TOKEN, { 'www-authenticate': 'Bearer' })
      }
    }
  }, async (_request, reply) => {
    const merged = Registry.merge([defaultMetricsRegistry(), registry])
    return await reply.type(merged.contentType).send(await merged.metrics())
  })
}

export default fp(metrics, { name: 'metrics' })
