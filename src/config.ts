import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

/** The environment, described once; `loadConfig` types it or stops naming the variable. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8000 }), // D28
  HOST: Type.String({ minLength: 1, default: '0.0.0.0' }), // D28
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  INGEST_TOKEN: Type.Optional(Type.String()),
  METRICS_TOKEN: Type.Optional(Type.String()),
  CORS_ORIGINS: Type.Optional(Type.String()),
  TRUST_PROXY: Type.String({ minLength: 1, default: 'true' }),
  MAX_UPLOAD_BYTES: Type.Integer({ minimum: 1, default: 10 * 1024 * 1024 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  LOG_LEVEL: Type.Union(LOG_LEVELS.map((l) => Type.Literal(l)), { default: 'info' }),
  DB_POOL_MAX: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  DB_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 15000 }),
  READ_CACHE_MAX_BYTES: Type.Integer({ minimum: 0, default: 16 * 1024 * 1024 }),
  INGEST_WARN_SHARE: Type.Number({ exclusiveMinimum: 0, maximum: 10, default: 0.15 }),
  // D32 connection timeouts
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 10_000 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 120_000 }),
  BODY_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 10_000 }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 72_000 }),
  AUTH_FAILURES_PER_MINUTE: Type.Integer({ minimum: 1, default: 30 }), // D65
  EXPORT_MAX_CONCURRENT: Type.Integer({ minimum: 1, maximum: 1000, default: 4 }), // D63
  EXPORT_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 30_000 }), // D63
  UPLOAD_QUEUE_SIZE: Type.Integer({
    minimum: 1,
    maximum: 100,
    default: 4,
    description: 'Uploads (dry runs and ingests together) one process reads and processes at once; one more is answered 503 with Retry-After, unread (D57). ' +
      'Four fit the admin page\'s dry run and publish beside a script\'s upload, and bound the memory of files in flight to four of MAX_UPLOAD_BYTES with their rows.'
  }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/\\s?#@]+/?$' })), // D52
  // D70 purge on publish
  CACHE_PURGE_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s#]+$' })),
  CACHE_PURGE_TOKEN: Type.Optional(Type.String())
})
type Env = Static<typeof EnvSchema>

/** D24: the production web origins and the local development origin. */
export const DEFAULT_CORS_ORIGINS = [
  'https://fuelkenya.com',
  'https://www.fuelkenya.com',
  'http://localhost:3000'
]

export interface Config {
  port: number
  host: string
  databaseUrl: string | undefined
  dataDir: string
  ingestToken: string | undefined
  /** When set, GET /metrics wants `Authorization: Bearer <METRICS_TOKEN>`; unset = open. */
  metricsToken: string | undefined
  corsOrigins: string[]
  /** D23: Fastify's trustProxy: true (left-most X-Forwarded-For), false, a hop count, or a list. */
  trustProxy: boolean | number | string[]
  maxUploadBytes: number
  redisUrl: string | undefined
  logLevel: Env['LOG_LEVEL']
  dbPoolMax: number
  dbStatementTimeoutMs: number
  /** Bound on the read cache's bodies besides the latest cycle (LRU by bytes). */
  readCacheMaxBytes: number
  /** D40: a dry run warns of prices moving more than this share (0.15 = 15 %). */
  ingestWarnShare: number
  /** D32 connection timeouts */
  headersTimeoutMs: number
  requestTimeoutMs: number
  bodyIdleTimeoutMs: number
  keepAliveTimeoutMs: number
  /** D52: the origin clients reach the service at (no trailing slash); unset: each request's own. */
  publicUrl: string | undefined
  /** D70: where a committed change asks the shared cache to drop its tags; unset: nothing is sent. */
  cachePurgeUrl: string | undefined
  /** D70: sent as `Authorization: Bearer <token>` with each purge when set. */
  cachePurgeToken: string | undefined
  /** D65: wrong bearer tokens answered 401 per trailing minute, all clients together; then 429. */
  authFailuresPerMinute: number
  /** D63: CSV exports streaming at once in this process; then 503. */
  exportMaxConcurrent: number
  /** D63: an export whose client reads nothing for this long is cut off. */
  exportIdleTimeoutMs: number
  /** D57: uploads (dry runs and ingests) read and processed at once per process; then 503. */
  uploadQueueSize: number
}

export class ConfigError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

export function loadConfig (source: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, so `INGEST_TOKEN=` in a .env file does not mean "token is ''".
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = source[key]
    if (value !== undefined && value.trim() !== '') raw[key] = value.trim()
  }
  // LOG_LEVEL in any case (`INFO`), as pino's own names are lower-case.
  if (typeof raw.LOG_LEVEL === 'string') raw.LOG_LEVEL = raw.LOG_LEVEL.toLowerCase()
  const env = Value.Convert(EnvSchema, Value.Default(EnvSchema, raw)) as Record<string, unknown>
  const firstError = Value.Errors(EnvSchema, env).First()
  if (firstError !== undefined) {
    const name = firstError.path.replace(/^\//, '')
    throw new ConfigError(`Invalid environment variable ${name}=${JSON.stringify(redactUrl(raw[name]))}: ${ALLOWED[name] ?? firstError.message}`)
  }
  const e = env as Env
  // D49 safe defaults: spec 5 rule 4's open upload is for local development only.
  if (e.INGEST_TOKEN === undefined && source.NODE_ENV === 'production') {
    throw new ConfigError('INGEST_TOKEN must be set when NODE_ENV=production (without it anyone may upload prices)')
  }
  if (e.HEADERS_TIMEOUT_MS > e.REQUEST_TIMEOUT_MS) {
    throw new ConfigError(`Invalid environment variable HEADERS_TIMEOUT_MS=${e.HEADERS_TIMEOUT_MS}: must not exceed REQUEST_TIMEOUT_MS (${e.REQUEST_TIMEOUT_MS})`)
  }
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    ingestToken: e.INGEST_TOKEN,
    metricsToken: e.METRICS_TOKEN,
    corsOrigins: e.CORS_ORIGINS === undefined ? DEFAULT_CORS_ORIGINS : parseOrigins(e.CORS_ORIGINS),
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    maxUploadBytes: e.MAX_UPLOAD_BYTES,
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    dbPoolMax: e.DB_POOL_MAX,
    dbStatementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    readCacheMaxBytes: e.READ_CACHE_MAX_BYTES,
    ingestWarnShare: e.INGEST_WARN_SHARE,
    headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    bodyIdleTimeoutMs: e.BODY_IDLE_TIMEOUT_MS,
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    publicUrl: e.PUBLIC_URL?.replace(/\/$/, ''),
    authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
    exportMaxConcurrent: e.EXPORT_MAX_CONCURRENT,
    exportIdleTimeoutMs: e.EXPORT_IDLE_TIMEOUT_MS,
    uploadQueueSize: e.UPLOAD_QUEUE_SIZE,
    cachePurgeUrl: e.CACHE_PURGE_URL,
    cachePurgeToken: e.CACHE_PURGE_TOKEN
  }
}

/** D49: an invalid setting says what it allows. */
const ALLOWED: Record<string, string> = {
  LOG_LEVEL: `expected one of ${LOG_LEVELS.join(', ')} (any case)`,
  DATABASE_URL: 'expected a postgres:// or postgresql:// URL',
  REDIS_URL: 'expected a redis:// or rediss:// URL',
  PUBLIC_URL: 'expected an origin such as https://api.fuelkenya.com (scheme, host and port only)',
  CACHE_PURGE_URL: 'expected an http:// or https:// URL such as http://127.0.0.1:6081/'
}

/** A value as a message may show it: the password and user of a URL replaced (never logged). */
export function redactUrl (value: unknown): unknown {
  if (typeof value !== 'string') return value
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, '$1***@')
}

function parseOrigins (value: string): string[] {
  const origins = value.split(',').map((o) => o.trim()).filter((o) => o !== '')
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError(`Invalid environment variable CORS_ORIGINS: ${JSON.stringify(origin)} is not an origin like https://example.com`)
    }
  }
  return origins
}

/** D23: `true`, `false`, a hop count, or a comma-separated list of addresses/CIDRs. */
function parseTrustProxy (value: string): boolean | number | string[] {
  const v = value.trim().toLowerCase()
  if (v === 'true') return true
  if (v === 'false') return false
  if (/^\d+$/.test(v)) return Number(v)
  const entries = value.split(',').map((s) => s.trim()).filter((s) => s !== '')
  for (const entry of entries) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(entry) && !['loopback', 'linklocal', 'uniquelocal'].includes(entry)) {
      throw new ConfigError(`Invalid environment variable TRUST_PROXY: ${JSON.stringify(entry)} is not true, false, a hop count, an address or a CIDR`)
    }
  }
  return entries
}
