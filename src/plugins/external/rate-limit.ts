import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyBaseLogger, FastifyPluginAsync, FastifyRequest } from 'fastify'
import { HttpError } from '../../domain/errors.js'
import { MemorySlidingWindowStore } from '../../ratelimit/memory-store.js'
import { DEFAULT_MAX, DEFAULT_WINDOW_MS, type HitResult, type SlidingWindowStore } from '../../ratelimit/sliding-window.js'

interface RateLimitPluginOptions {
  /**
   * The sliding log (D22); the plugin closes it when the app closes. Omitted: Redis when
   * `redisUrl` is set (shared by all replicas), else this process's memory.
   */
  store?: SlidingWindowStore | undefined
  redisUrl?: string | undefined
  /** Routes under these prefixes are never limited (the docs: routes a library declares). */
  exemptPrefixes?: readonly string[]
}

/** Spec section 7, to the letter. */
const RATE_LIMIT_DETAIL = 'Rate limit exceeded. Try again later.'

/** The shape @fastify/rate-limit gives a custom store's `incr` callback. */
interface PluginStoreResult { current: number, ttl: number }
type PluginStoreCallback = (err: Error | null, result?: PluginStoreResult) => void

/**
 * Translates a HitResult into what @fastify/rate-limit derives its headers from (its index.js,
 * v11): it sends `RateLimit-Remaining = max(0, max - current)`,
 * `RateLimit-Reset = ceil(ttl / 1000)`, and treats the request as exceeded when
 * `current > max`, in which case it also sends `Retry-After = ceil(ttl / 1000)` and throws the
 * `errorResponseBuilder` result. So an allowed request reports the count in the window
 * (`max - remaining`), a rejected one `max + 1`, and `ttl` is the time until the oldest counted
 * request leaves the window (D22), not the plugin's usual fixed-window expiry.
 */
function toPluginResult (hit: HitResult, max: number): PluginStoreResult {
  return {
    current: hit.allowed ? max - hit.remaining : max + 1,
    ttl: hit.resetMs
  }
}

/**
 * @fastify/rate-limit instantiates `store` itself (`new Store(globalParams)`), so the adapter is
 * a class built around the given SlidingWindowStore.
 */
function storeClass (store: SlidingWindowStore, max: number, windowMs: number) {
  return class SlidingWindowPluginStore {
    incr (key: string, cb: PluginStoreCallback): void {
      if (store.hitSync !== undefined) {
        cb(null, toPluginResult(store.hitSync(key), max))
        return
      }
      store.hit(key).then((hit) => cb(null, toPluginResult(hit, max)), (err: Error) => cb(err))
    }

    /**
     * Called for a route with its own `config.rateLimit`. D22 is one allowance per client across
     * all limited paths, so a route may not change the limit; sharing the store is then correct.
     */
    child (routeOptions: object): SlidingWindowPluginStore {
      // The plugin passes its merged parameters (global options + the route's), typed as RouteOptions.
      const merged = routeOptions as { max?: unknown, timeWindow?: unknown }
      if (merged.max !== max || merged.timeWindow !== windowMs) {
        throw new Error('rate-limit: per-route max/timeWindow are not supported (D22 is one allowance per client)')
      }
      return this
    }
  }
}

/**
 * D22 exemptions: GET (and its implied HEAD) /v1/health, and every OPTIONS request: a preflight
 * is the browser asking permission and must not eat into the allowance it asks for.
 * `routeOptions.url` is the registered pattern including any prefix, so `/v1/health?x=1` matches.
 */
function isExempt (request: FastifyRequest): boolean {
  if (request.method === 'OPTIONS') return true
  return (request.method === 'GET' || request.method === 'HEAD') && request.routeOptions.url === '/v1/health'
}

/**
 * D22 over @fastify/rate-limit. Register it before the routes: the plugin attaches its onRequest
 * hook to each route as it is declared. The hook is route-level, so it runs after every
 * instance-level onRequest hook, @fastify/cors included: CORS headers are already on the reply
 * when a 429 is thrown (D22), and preflights are answered by @fastify/cors before the limiter
 * would see them (and are exempt anyway). Not-found requests have no route, so the app should
 * give its 404 handler `{ preHandler: app.rateLimit() }` to count them too.
 */
const rateLimitPlugin: FastifyPluginAsync<RateLimitPluginOptions> = async (app, options) => {
  const store = options.store ?? await createStore(options.redisUrl, app.log)
  // The store decides; the plugin only announces what it enforces.
  const max = store.max ?? DEFAULT_MAX
  const windowMs = store.windowMs ?? DEFAULT_WINDOW_MS
  // Added before the library's own onRoute hook, which then leaves these routes alone.
  const prefixes = options.exemptPrefixes ?? []
  app.addHook('onRoute', (route) => {
    if (prefixes.some((prefix) => route.url === prefix || route.url.startsWith(prefix + '/'))) {
      route.config = { ...route.config, rateLimit: false }
    }
  })

  await app.register(rateLimit, {
    global: true,
    max,
    timeWindow: windowMs,
    hook: 'onRequest', // before the body is read: a blocked client's upload is never parsed
    // D23: request.ip is already the left-most X-Forwarded-For entry when the app's trustProxy
    // says so (and the socket address otherwise). The plugin's default key would also fold IPv6
    // addresses into /64 networks; the spec limits per client IP, so the address is the key.
    keyGenerator: (request) => request.ip,
    allowList: (request) => isExempt(request),
    enableDraftSpec: true, // RateLimit-Limit / -Remaining / -Reset, not X-RateLimit-* (D22)
    // The store fails open by itself (see RedisSlidingWindowStore); anything it still throws is a
    // bug and should surface as a 500, not pass silently.
    skipOnError: false,
    store: storeClass(store, max, windowMs),
    // Thrown by the plugin; the app's single error handler renders it as {"detail": ...} (D19).
    errorResponseBuilder: () => new HttpError(429, RATE_LIMIT_DETAIL)
  })

  app.addHook('onClose', async () => {
    await store.close?.()
  })
}

export default fp(rateLimitPlugin, { name: 'rate-limit', fastify: '5.x' })

/**
 * Redis when REDIS_URL is set (shared by all replicas), otherwise this process's memory (one
 * allowance per replica). Redis outages are logged once each, at error level, and their end at
 * info level.
 */
async function createStore (redisUrl: string | undefined, log: FastifyBaseLogger): Promise<SlidingWindowStore> {
  if (redisUrl === undefined) return new MemorySlidingWindowStore()
  // ioredis is loaded only when it is used (several MB a memory-store replica never needs).
  const [{ createRedisClient }, { RedisSlidingWindowStore }] = await Promise.all([
    import('../../ratelimit/redis-client.js'),
    import('../../ratelimit/redis-store.js')
  ])
  return new RedisSlidingWindowStore({
    redis: createRedisClient(redisUrl),
    prefix: 'fuel:ratelimit:',
    onError: (err) => log.error({ err }, 'rate-limit store: Redis unavailable, allowing requests (fail open) until it returns'),
    onRecover: () => log.info('rate-limit store: Redis available again')
  })
}
