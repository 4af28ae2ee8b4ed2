import fastifyRateLimit from '@fastify/rate-limit'
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../domain/errors.js'
import { MemorySlidingWindowStore } from './memory-store.js'
import { DEFAULT_MAX, DEFAULT_WINDOW_MS, clientKey, type HitResult, type SlidingWindowStore } from './sliding-window.js'

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

type IncrCallback = (err: Error | null, result?: { current: number, ttl: number }) => void

/** @fastify/rate-limit's view of a count: `current` past `max` means refused. */
function counted (hit: HitResult, max: number): { current: number, ttl: number } {
  return { current: hit.allowed ? max - hit.remaining : max + 1, ttl: hit.resetMs }
}

/**
 * The plugin's `store` option: a class it instantiates once. Ours hands every count to the D22
 * sliding log, synchronously where the store can (memory), so no timer or promise of its own.
 */
function storeClass (store: SlidingWindowStore, max: number): new () => object {
  return class SlidingWindowAdapter {
    incr (key: string, callback: IncrCallback): void {
      if (store.hitSync !== undefined) {
        callback(null, counted(store.hitSync(key), max))
        return
      }
      store.hit(key).then((hit) => { callback(null, counted(hit, max)) }, callback)
    }

    // D22 one allowance per client: a route of its own limit is refused when it is declared.
    child (): never {
      throw new Error('rate-limit: per-route max/timeWindow are not supported (D22 is one allowance per client)')
    }
  }
}

/**
 * D22 / spec 8: 60 requests per client in any 60 s, counted by our sliding log through
 * @fastify/rate-limit's `store` option, with the draft-standard RateLimit-* headers and
 * `Retry-After` on the 429. Its hook is route-level onRequest, so CORS headers (an instance hook)
 * are on a 429 and a refused upload is never read. Routes declare `config: { rateLimit: false }`
 * to be exempt (health, metrics, the contract; generated from openapi.yaml).
 */
const rateLimitPlugin: FastifyPluginAsync<RateLimitPluginOptions> = async (app, options) => {
  const store = options.store ?? await createStore(options.redisUrl, app.log)
  const max = store.max ?? DEFAULT_MAX

  // Routes a library declares (the docs UI) cannot carry a config of their own.
  const prefixes = options.exemptPrefixes ?? []
  app.addHook('onRoute', (route) => {
    if (prefixes.some((prefix) => route.url === prefix || route.url.startsWith(prefix + '/'))) {
      route.config = { ...route.config, rateLimit: false }
    }
  })

  await app.register(fastifyRateLimit, {
    max,
    timeWindow: store.windowMs ?? DEFAULT_WINDOW_MS,
    enableDraftSpec: true,
    store: storeClass(store, max) as never,
    // D48 bounded keys: the D23 client address when it is an IP, else the socket's.
    keyGenerator: (request) => clientKey(request.ip, request.socket.remoteAddress),
    // Rendered as {"detail": ...} by the app's error handler (D19).
    errorResponseBuilder: () => new HttpError(429, RATE_LIMIT_DETAIL)
  })

  app.addHook('onClose', async () => {
    await store.close?.()
  })
}

export default fp(rateLimitPlugin, { name: 'rate-limit', fastify: '5.x' })

/**
 * Redis when REDIS_URL is set (shared by all replicas), otherwise this process's memory (one
 * allowance per replica). D47 Redis outages and their end are logged once each, at warn.
 */
async function createStore (redisUrl: string | undefined, log: FastifyBaseLogger): Promise<SlidingWindowStore> {
  if (redisUrl === undefined) return new MemorySlidingWindowStore()
  // ioredis is loaded only when it is used (several MB a memory-store replica never needs).
  const [{ createRedisClient }, { RedisSlidingWindowStore }] = await Promise.all([
    import('./redis-client.js'),
    import('./redis-store.js')
  ])
  return new RedisSlidingWindowStore({
    redis: createRedisClient(redisUrl),
    prefix: 'fuel:ratelimit:',
    onError: (err) => log.warn({ err }, 'rate-limit store: Redis unavailable, allowing requests (fail open) until it returns'),
    onRecover: () => log.warn('rate-limit store: Redis available again')
  })
}
