import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyServerOptions } from 'fastify'
import type { Logger } from 'pino'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import type { Config } from './config.js'
import { clientErrorHandler } from './http-server/client-errors.js'
import { AccessLog } from './logging/access-log.js'
import { lazyChildLoggerFactory } from './logging/lazy-logger.js'
import { createServiceLogger, flushRepeatedFailures, type LoggerSetting } from './logging/service-logger.js'
import { prettyDestination } from './logging/log-destination.js'
import { timeoutServerOptions } from './http-server/timeouts.js'
import type { Database } from './db/client.js'
import cacheInvalidation from './read-cache/invalidation.js'
import cachePurge from './cache-purge/index.js'
import cyclesRepository from './db/cycles-plugin.js'
import database from './db/database-plugin.js'
import errors from './errors/index.js'
import { parseQueryString } from './http-server/query-string.js'
import httpServer from './http-server/index.js'
import httpCaching from './http-caching/index.js'
import metrics from './metrics/index.js'
import pricesRepository from './db/prices-plugin.js'
import readCache from './read-cache/index.js'
import cors from './cors/index.js'
import rateLimit from './rate-limit/index.js'
import type { SlidingWindowStore } from './rate-limit/sliding-window.js'
import { PLUGIN_TIMEOUT_MS } from './startup-errors.js'
import cyclesRoutes from './routes/cycles/index.js'
import cycleWithdrawalRoutes from './routes/cycles/withdraw.js'
import adminPage from './admin/admin-page.js'
import bearerAuth from './auth/index.js'
import docsRoutes, { DOCS_PREFIX } from './routes/docs/index.js'
import healthRoutes from './routes/health/index.js'
import metricsRoutes, { METRICS_PATH } from './routes/metrics/index.js'
import ingestRoutes from './routes/ingest/index.js'
import pricesRoutes from './routes/prices/index.js'
import townsRoutes from './routes/towns/index.js'

interface AppOptions {
  config: Config
  /** An open, migrated database owned by the caller (tests); otherwise opened from config. */
  database?: Database | undefined
  /** The rate-limit store; otherwise chosen from config. */
  rateLimitStore?: SlidingWindowStore | undefined
}

/** Tokens never reach the logs, whatever a serializer is later changed to print. */
export const LOG_REDACT = ['req.headers.authorization', 'req.headers.cookie']

/** Fastify's options; `log` is the service's own logger, which Fastify's stays off for. */
function serverOptions (config: Config, log?: Logger): FastifyServerOptions {
  return {
    // Which address is the client's; a hop count works at run time though Fastify's typings omit it.
    trustProxy: config.trustProxy as FastifyServerOptions['trustProxy'],
    requestIdHeader: 'x-request-id',
    // one access line, only for failures and slow answers, is cheaper than Fastify's per-request lines (D45)
    logController: new AccessLog(),
    childLoggerFactory: lazyChildLoggerFactory(log),
    return503OnClosing: false,
    // PGlite's first start can outlast Fastify's 10 s default for a plugin.
    pluginTimeout: PLUGIN_TIMEOUT_MS,
    ...timeoutServerOptions(config), // bounds on slow clients, so none holds a connection forever
    clientErrorHandler, // node:http's own 400, 408 and 431 in the error envelope
    frameworkErrors: (error, _request, reply) => {
      void (reply as FastifyReply).code(error.statusCode ?? 400).send({ detail: error.code === 'FST_ERR_BAD_URL' ? 'The URL is not valid percent-encoding' : error.message })
    },
    routerOptions: { querystringParser: parseQueryString }, // an empty value is an absent parameter
    ajv: {
      // Every failing parameter reported; `Infinity` and `NaN` are not numbers.
      customOptions: { allErrors: true, strictNumbers: true }
    }
  }
}

/** pino-pretty for a person at a terminal; JSON lines otherwise, and always in production. */
export function terminalLogger (config: Config, isTTY: boolean | undefined, nodeEnv: string | undefined): LoggerSetting {
  if (isTTY !== true || nodeEnv === 'production') return undefined
  return {
    level: config.logLevel,
    stream: prettyDestination(PRETTY_OPTIONS)
  }
}

const PRETTY_OPTIONS = { translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', singleLine: true }

/** Logger options as given (tests pass their own stream), always with LOG_REDACT added. */
export function loggerOptions (config: Config, logger: LoggerSetting): LoggerSetting {
  if (logger === undefined || logger === true) return { level: config.logLevel, redact: LOG_REDACT }
  if (logger === false) return logger
  const own = logger.redact
  const paths = Array.isArray(own) ? own : own?.paths ?? []
  return { ...logger, redact: { ...(Array.isArray(own) ? {} : own), paths: [...new Set([...LOG_REDACT, ...paths])] } }
}

/** Non-contract routes never rate limited; contract operations say it themselves. */
const UNLIMITED_PATHS = ['/', `${DOCS_PREFIX}/*`, METRICS_PATH]

export interface ServicePlugin {
  name: string
  plugin: FastifyPluginAsync<any>
  options?: object
}

/** The plugins in registration order; a list, so the bench can swap one for an empty plugin of the same name. */
export function servicePlugins (options: AppOptions): ServicePlugin[] {
  const { config } = options
  return [
    // These two see every route as it is declared (onRoute), so they come before any plugin that declares one.
    { name: 'http-caching', plugin: httpCaching },
    { name: 'metrics', plugin: metrics },
    { name: 'cors', plugin: cors, options: { origins: config.corsOrigins } },
    { name: 'rate-limit', plugin: rateLimit, options: { store: options.rateLimitStore, redisUrl: config.redisUrl, unlimitedPaths: UNLIMITED_PATHS } },
    { name: 'http-server', plugin: httpServer, options: { bodyIdleMs: config.bodyIdleTimeoutMs, maxUploadBytes: config.maxUploadBytes } },
    { name: 'errors', plugin: errors, options: { dataDir: config.databaseUrl === undefined && !config.dataDir.includes('://') ? config.dataDir : undefined } },
    { name: 'database', plugin: database, options: { config, database: options.database } },
    { name: 'prices-repository', plugin: pricesRepository },
    { name: 'cycles-repository', plugin: cyclesRepository },
    { name: 'read-cache', plugin: readCache, options: { maxBytes: config.readCacheMaxBytes } },
    { name: 'cache-purge', plugin: cachePurge, options: { url: config.cachePurgeUrl, token: config.cachePurgeToken } },
    { name: 'cache-invalidation', plugin: cacheInvalidation },
    { name: 'bearer-auth', plugin: bearerAuth, options: { failuresPerMinute: config.authFailuresPerMinute } },
    { name: 'metrics-routes', plugin: metricsRoutes, options: { token: config.metricsToken } },
    { name: 'docs-routes', plugin: docsRoutes },
    { name: 'health-routes', plugin: healthRoutes },
    { name: 'prices-routes', plugin: pricesRoutes, options: { exports: { maxConcurrent: config.exportMaxConcurrent, idleMs: config.exportIdleTimeoutMs } } },
    { name: 'towns-routes', plugin: townsRoutes },
    { name: 'cycles-routes', plugin: cyclesRoutes, options: { config } },
    { name: 'ingest-routes', plugin: ingestRoutes, options: { config } },
    { name: 'cycle-withdrawal-routes', plugin: cycleWithdrawalRoutes, options: { config } },
    { name: 'admin-page', plugin: adminPage }
  ]
}

interface ServiceOptions extends AppOptions {
  /** Replaces the list of plugins (the bench's ablation); normally `servicePlugins(options)`. */
  plugins?: ServicePlugin[] | undefined
}

const serviceApp: FastifyPluginAsync<ServiceOptions> = async (app, options) => {
  for (const { plugin, options: pluginOptions } of options.plugins ?? servicePlugins(options)) {
    await app.register(plugin, pluginOptions ?? {})
  }
  if (options.config.ingestToken === undefined) {
    app.log.warn('INGEST_TOKEN is not set: POST /v1/ingest/csv and DELETE /v1/cycles/{valid_from} accept every request without authorisation')
  }
}

export const service = fp(serviceApp, { name: 'fuel-price-service', fastify: '5.x' })

export interface BuildAppOptions extends ServiceOptions {
  /** Fastify's schema compilers, its own when absent; tests share one set across the apps a process builds. */
  schemaCompilers?: NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
  /** pino's options (LOG_LEVEL's when absent), or false for no log at all. */
  logger?: LoggerSetting
}

export async function buildApp (options: BuildAppOptions): Promise<FastifyInstance> {
  const log = createServiceLogger(loggerOptions(options.config, options.logger))
  const app = Fastify({ ...serverOptions(options.config, log), schemaController: { compilersFactory: options.schemaCompilers } })
    .withTypeProvider<TypeBoxTypeProvider>()
  // Fastify's logger is off, so `app.log`, which every plugin inherits, is set to ours.
  if (log !== undefined) {
    app.log = log
    app.addHook('onClose', (_instance, done) => { flushRepeatedFailures(log); done() })
  }
  await app.register(service, options)
  return app
}
