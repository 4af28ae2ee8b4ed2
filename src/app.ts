import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.js'
import type { Database } from './db/client.js'
import type { SlidingWindowStore } from './ratelimit/sliding-window.js'
import cacheInvalidation from './plugins/cache-invalidation.js'
import cors from './plugins/cors.js'
import database from './plugins/database.js'
import docs, { exemptDocsFromRateLimit } from './plugins/docs.js'
import errors from './plugins/errors.js'
import httpCaching from './plugins/http-caching.js'
import metrics from './plugins/metrics.js'
import rateLimit, { createRateLimitStore } from './plugins/rate-limit.js'
import healthRoutes from './routes/health/index.js'
import ingestRoutes from './routes/ingest/index.js'
import pricesRoutes from './routes/prices/index.js'
import townsRoutes from './routes/towns/index.js'

export interface AppOptions {
  config: Config
  /** An open, migrated database owned by the caller (tests); otherwise opened from config. */
  database?: Database | undefined
  /** The D22 store; otherwise chosen from config (Redis when REDIS_URL is set, else memory). */
  rateLimitStore?: SlidingWindowStore | undefined
  /** D22 allowance per window; 60 unless a test needs room. Must match the store's own max. */
  rateLimitMax?: number | undefined
  logger?: FastifyServerOptions['logger']
}

/** Tokens never reach the logs, whatever a serializer is later changed to print. */
export const LOG_REDACT = ['req.headers.authorization', 'req.headers.cookie']

export function serverOptions (config: Config, logger?: FastifyServerOptions['logger']): FastifyServerOptions {
  return {
    logger: loggerOptions(config, logger),
    // D23. A hop count is supported at run time (Fastify's docs) though its typings omit it.
    trustProxy: config.trustProxy as FastifyServerOptions['trustProxy'],
    requestIdHeader: 'x-request-id',
    return503OnClosing: false,
    ajv: {
      // D20: report every failing parameter, not just the first.
      customOptions: { allErrors: true }
    }
  }
}

/** Logger options as given (tests pass their own stream), always with LOG_REDACT added. */
function loggerOptions (config: Config, logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === undefined) return { level: config.logLevel, redact: LOG_REDACT }
  if (typeof logger !== 'object' || logger === null) return logger
  const own = logger.redact
  const paths = Array.isArray(own) ? own : own?.paths ?? []
  return { ...logger, redact: { ...(Array.isArray(own) ? {} : own), paths: [...new Set([...LOG_REDACT, ...paths])] } }
}

/** The service with all its plugins and routes, ready to `listen` or `inject`. */
export async function buildApp (options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(options.config, options.logger)).withTypeProvider<TypeBoxTypeProvider>()

  // D21: an empty query value means the parameter is absent (its default applies).
  // (Hooks on every request are callback-style: no promise per request on the hot path.)
  app.addHook('preValidation', (request, _reply, done) => {
    const query = request.query as Record<string, unknown> | undefined
    if (query !== undefined && query !== null) {
      for (const key in query) if (query[key] === '') delete query[key]
    }
    done()
  })

  // Graceful shutdown: a request still in flight when closing starts (an ingest, say) is
  // finished, and its keep-alive connection closed with it, so the server can close at once.
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close')
    done(null, payload)
  })

  await app.register(httpCaching)
  await app.register(cors, { origins: options.config.corsOrigins })
  // Before the limiter's own onRoute hook: Swagger UI's routes are marked exempt (see docs.ts).
  app.addHook('onRoute', exemptDocsFromRateLimit)
  await app.register(rateLimit, {
    store: options.rateLimitStore ?? await createRateLimitStore(options.config, app.log),
    ...(options.rateLimitMax !== undefined ? { max: options.rateLimitMax } : {})
  })
  await app.register(errors) // after the limiter, so its not-found handler is limited too
  await app.register(metrics, { token: options.config.metricsToken })
  await app.register(docs)
  await app.register(database, { config: options.config, database: options.database })
  await app.register(cacheInvalidation)

  await app.register(healthRoutes)
  await app.register(pricesRoutes)
  await app.register(townsRoutes)
  await app.register(ingestRoutes, { config: options.config })

  if (options.config.ingestToken === undefined) {
    // D13: open ingest is for local development only; say so at every start.
    app.log.warn('INGEST_TOKEN is not set: POST /v1/ingest/csv accepts every request without authorisation')
  }
  return app
}
