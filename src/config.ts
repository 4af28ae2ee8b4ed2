import { OptionalKind, Type, type StaticDecode, type TSchema } from '@sinclair/typebox'
import { TransformDecodeError, Value } from '@sinclair/typebox/value'

/** The production web origins and the local development origin. */
export const DEFAULT_CORS_ORIGINS = [
  'https://fuelkenya.com',
  'https://www.fuelkenya.com',
  'http://localhost:3000'
]

/**
 * Every setting, described once: `Config`, `loadConfig`, the README table and `.env.example` come from it.
 * To add one: a CONSTANT_CASE key (its field is the camelCase) whose TypeBox type has the bounds, a one-sentence
 * `description`, and a `default` or, in `Type.Optional`, `examples: [value]`; `allowed` says in words what a string
 * takes (also the "expected …" error); `anyCase: true` compares lower-cased; then `npm run generate`.
 * A rule between two settings goes in `loadConfig`.
 */
export const SETTINGS = {
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8000, description: 'The TCP port the server listens on.' }),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', allowed: 'an address or host name', description: 'The address the server listens on; `0.0.0.0` is every IPv4 interface.' }),
  DATABASE_URL: Type.Optional(Type.String({
    pattern: '^postgres(ql)?://',
    allowed: 'a postgres:// or postgresql:// URL',
    examples: ['postgres://user:password@db.internal:5432/fuel'],
    description: 'The PostgreSQL database the prices are kept in; unset, an embedded PGlite database in `DATA_DIR`.'
  })),
  DATA_DIR: Type.String({ minLength: 1, default: './data', allowed: 'a directory', description: 'Where the embedded PGlite database keeps its files when `DATABASE_URL` is unset.' }),
  INGEST_TOKEN: Type.Optional(Type.String({
    allowed: 'any text',
    examples: ['change-me'],
    description: 'The bearer token that uploads and withdrawals require; unset, anyone may upload, which is for local development only (a warning at every start, and with `NODE_ENV=production` the service refuses to start).'
  })),
  METRICS_TOKEN: Type.Optional(Type.String({
    allowed: 'any text',
    examples: ['change-me-too'],
    description: 'The bearer token `GET /metrics` requires; unset, `/metrics` is open, so keep it off the public internet.'
  })),
  CORS_ORIGINS: Type.Transform(Type.String({
    default: DEFAULT_CORS_ORIGINS.join(','),
    allowed: 'comma-separated origins such as https://example.com',
    description: 'The web origins whose pages may read the API\'s answers in a browser; a value replaces the whole default list.'
  })).Decode(parseOrigins).Encode((origins) => origins.join(',')),
  TRUST_PROXY: Type.Transform(Type.String({
    minLength: 1,
    default: 'true',
    allowed: '`true`, `false`, a hop count, or comma-separated addresses and CIDRs',
    description: 'Which forwarded client address to believe, for the rate limit and absolute links: `true` the left-most `X-Forwarded-For`, `false` the socket\'s, a number of proxy hops, or the trusted proxies\' addresses (D23).'
  })).Decode(parseTrustProxy).Encode((value) => Array.isArray(value) ? value.join(',') : String(value)),
  MAX_UPLOAD_BYTES: Type.Integer({ minimum: 1, default: 10 * 1024 * 1024, description: 'The largest CSV upload accepted, in bytes (10 MiB); a larger one is refused with 413 and nothing is written.' }),
  REDIS_URL: Type.Optional(Type.String({
    pattern: '^rediss?://',
    allowed: 'a redis:// or rediss:// URL',
    examples: ['redis://127.0.0.1:6379'],
    description: 'A Redis server in which all replicas share one rate-limit allowance per client; unset, each process counts on its own (the read cache needs no Redis: replicas clear it on PostgreSQL\'s NOTIFY).'
  })),
  LOG_LEVEL: Type.Union([
    Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'),
    Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')
  ], {
    default: 'info',
    anyCase: true,
    description: 'How much is logged: at `info` a request writes a line only when it fails (5xx) or takes over 1 s, `debug` logs every request, and the start line shows at every level.'
  }),
  DB_POOL_MAX: Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'PostgreSQL connections per process, besides the one that listens for changes.' }),
  DB_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 15000, description: 'PostgreSQL\'s `statement_timeout` on the service\'s connections, in milliseconds.' }),
  READ_CACHE_MAX_BYTES: Type.Integer({ minimum: 0, default: 16 * 1024 * 1024, description: 'Bytes of read answers each process keeps in memory besides the latest cycle (always kept), the least recently used dropped first.' }),
  INGEST_WARN_SHARE: Type.Number({ exclusiveMinimum: 0, maximum: 10, default: 0.15, description: 'A dry run warns of a price moving more than this share (0.15 = 15 %) from the town\'s previous price, or lying that far outside the cycle\'s other towns.' }),
  INGEST_MISSING_TOWNS_SHARE: Type.Number({ minimum: 0, maximum: 1, default: 0.1, allowed: 'a share from 0 to 1, such as 0.1 for 10%', description: 'A dry run warns of a cycle that would lack more than this share of the previous cycle\'s towns (0.1 = 10 %).' }),
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 10_000, description: 'A request line and headers must arrive within this many milliseconds, at most `REQUEST_TIMEOUT_MS`, else 408 and the connection is closed (slow clients, D32).' }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 120_000, description: 'A whole request, body included, must arrive within this many milliseconds (a 10 MiB upload at 0.7 Mbit/s), else 408; a shutdown waits this plus 10 s for requests in flight.' }),
  BODY_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 10_000, description: 'The longest silence, in milliseconds, while a request body is arriving; then the connection is closed.' }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 72_000, description: 'How long an idle connection is kept open between requests, in milliseconds; above common load balancers\' 60 s.' }),
  AUTH_FAILURES_PER_MINUTE: Type.Integer({ minimum: 1, default: 30, description: 'Wrong bearer tokens answered 401 in any trailing minute, all clients and protected routes together, per process; beyond, 429 until the count falls (D65).' }),
  EXPORT_MAX_CONCURRENT: Type.Integer({ minimum: 1, maximum: 1000, default: 4, description: 'CSV exports streamed at once per process; beyond, 503 with `Retry-After`.' }),
  EXPORT_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 30_000, description: 'An export whose client takes no byte for this many milliseconds is cut off; keep it above `DB_STATEMENT_TIMEOUT_MS`.' }),
  UPLOAD_QUEUE_SIZE: Type.Integer({ minimum: 1, maximum: 100, default: 4, description: 'Uploads (dry runs and ingests together) one process reads and processes at once; one more is answered 503 with `Retry-After`, unread; four fit the admin page\'s dry run and publish beside a script\'s upload, and bound the memory of files in flight to four of `MAX_UPLOAD_BYTES` with their rows (D57).' }),
  PUBLIC_URL: Type.Optional(Type.Transform(Type.String({
    pattern: '^https?://[^/\\s?#@]+/?$',
    allowed: 'an origin such as https://api.fuelkenya.com (scheme, host and port only)',
    examples: ['https://api.fuelkenya.com'],
    description: 'The origin clients reach the service at, for absolute links such as the Atom feed\'s `rel="self"`; unset, each request\'s own scheme and host as forwarded under `TRUST_PROXY` (set it behind a proxy or CDN).'
  })).Decode((url) => url.replace(/\/$/, '')).Encode((url) => url)),
  CACHE_PURGE_URL: Type.Optional(Type.String({
    pattern: '^https?://[^\\s#]+$',
    allowed: 'an http:// or https:// URL such as http://127.0.0.1:6081/',
    examples: ['http://127.0.0.1:6081/'],
    description: 'Where a committed upload or withdrawal asks a shared cache in front (`deploy/varnish/default.vcl`) to drop what it changed, by a `PURGE` with `Surrogate-Key` tags; unset, nothing is sent.'
  })),
  CACHE_PURGE_TOKEN: Type.Optional(Type.String({
    allowed: 'any text',
    examples: ['change-me-three'],
    description: 'Sent as `Authorization: Bearer <token>` with each purge, for a cache that wants it (the Varnish configuration does when its own environment has the same variable).'
  }))
}

/** Environment variables read that are not settings; a test holds src/ to these and SETTINGS. */
export const NOT_SETTINGS = {
  NODE_ENV: 'Node\'s convention for the kind of deployment: `production` refuses an open upload and keeps logs JSON at a terminal.'
}

const EnvSchema = Type.Object(SETTINGS)

type Settings = typeof SETTINGS
/** `DB_POOL_MAX` → `dbPoolMax`. */
type CamelCase<Name extends string> = Name extends `${infer Head}_${infer Tail}` ? `${Lowercase<Head>}${Capitalize<CamelCase<Tail>>}` : Lowercase<Name>
/** A setting's decoded value; an optional one is `undefined` when unset. */
type SettingValue<S extends TSchema> = S extends { [OptionalKind]: 'Optional' } ? StaticDecode<S> | undefined : StaticDecode<S>

/** The settings as the service uses them: every field present, named in camelCase. */
export type Config = { [Name in keyof Settings as CamelCase<Name>]: SettingValue<Settings[Name]> } & {
  /** Not a setting: the clock a dry run and the accepted cycle window read today from; tests set it. */
  now?: (() => Date) | undefined
}

/** The config field of an environment name, as `CamelCase` types it. */
export function configKey (name: string): string {
  return name.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
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
  for (const [name, schema] of Object.entries<TSchema>(SETTINGS)) {
    const value = source[name]?.trim()
    if (value !== undefined && value !== '') raw[name] = schema.anyCase === true ? value.toLowerCase() : value
  }
  const env = Value.Convert(EnvSchema, Value.Default(EnvSchema, raw)) as Record<string, unknown>
  const firstError = Value.Errors(EnvSchema, env).First()
  if (firstError !== undefined) {
    const name = firstError.path.replace(/^\//, '')
    const schema = (SETTINGS as Record<string, TSchema>)[name]
    const allowed = schema === undefined ? undefined : allowedText(schema)
    throw new ConfigError(`Invalid environment variable ${name}=${JSON.stringify(redactUrl(raw[name]))}: ${allowed === undefined ? firstError.message : `expected ${allowed}`}`)
  }
  // The open upload is for local development only (D49).
  if (env.INGEST_TOKEN === undefined && source.NODE_ENV === 'production') {
    throw new ConfigError('INGEST_TOKEN must be set when NODE_ENV=production (without it anyone may upload prices)')
  }
  if ((env.HEADERS_TIMEOUT_MS as number) > (env.REQUEST_TIMEOUT_MS as number)) {
    throw new ConfigError(`Invalid environment variable HEADERS_TIMEOUT_MS=${env.HEADERS_TIMEOUT_MS}: must not exceed REQUEST_TIMEOUT_MS (${env.REQUEST_TIMEOUT_MS})`)
  }
  let decoded: Record<string, unknown>
  try {
    decoded = Value.Decode(EnvSchema, env)
  } catch (err) {
    // A Transform's own ConfigError, unwrapped from TypeBox's wrapper.
    throw err instanceof TransformDecodeError ? err.error : err
  }
  const config: Record<string, unknown> = {}
  for (const name of Object.keys(SETTINGS)) config[configKey(name)] = decoded[name]
  return config as Config
}

/** What a setting takes, in words, when its schema says more than its type: `allowed`, or the words of a union. */
export function allowedText (schema: TSchema): string | undefined {
  if (typeof schema.allowed === 'string') return schema.allowed
  if (!Array.isArray(schema.anyOf) || !schema.anyOf.every((member: TSchema) => typeof member.const === 'string')) return undefined
  return `one of ${schema.anyOf.map((member: TSchema) => member.const as string).join(', ')}${schema.anyCase === true ? ' (any case)' : ''}`
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
