import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.js'
import type { Database } from './db/client.js'
import type { SlidingWindowStore } from './ratelimit/sliding-window.js'
import cors from './plugins/cors.js'
import database from './plugins/database.js'
import errors from './plugins/errors.js'
import httpCaching from './plugins/http-caching.js'
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

export function serverOptions (config: Config, logger?: FastifyServerOptions['logger']): FastifyServerOptions {
  return {
    logger: logger ?? {
      level: config.logLevel,
      // Tokens never reach the logs, whatever a serializer is later changed to print.
      redact: ['req.headers.authorization', 'req.headers.cookie']
    },
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

/** The service with all its plugins and routes, ready to `listen` or `inject`. */
export async function buildApp (options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(options.config, options.logger)).withTypeProvider<TypeBoxTypeProvider>()

  // D21: an empty query value means the parameter is absent (its default applies).
  app.addHook('preValidation', async (request) => {
    const query = request.query as Record<string, unknown> | undefined
    if (query === undefined || query === null) return
    for (const key of Object.keys(query)) if (query[key] === '') delete query[key]
  })

  await app.register(errors)
  await app.register(httpCaching)
  await app.register(cors, { origins: options.config.corsOrigins })
  await app.register(rateLimit, {
    store: options.rateLimitStore ?? createRateLimitStore(options.config, app.log),
    ...(options.rateLimitMax !== undefined ? { max: options.rateLimitMax } : {})
  })
  await app.register(database, { config: options.config, database: options.database })

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
