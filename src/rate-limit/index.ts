import fastifyRateLimit from '@fastify/rate-limit'
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../http-server/http-error.js'
import { MemorySlidingWindowStore } from './memory-store.js'
import { DEFAULT_MAX, DEFAULT_WINDOW_MS, clientKey, type HitResult, type SlidingWindowStore } from './sliding-window.js'

interface RateLimitPluginOptions {
  /** The sliding log, closed with the app; omitted: Redis when `redisUrl` is set, else memory. */
  store?: SlidingWindowStore | undefined
  redisUrl?: string | undefined
  /** Non-contract paths never limited; a trailing `/*` covers a prefix. */
  unlimitedPaths?: readonly string[]
}

/** Spec 7, word for word. */
const RATE_LIMIT_DETAIL = 'Rate limit exceeded. Try again later.'

type IncrCallback = (err: Error | null, result?: { current: number, ttl: number }) => void

/** A sliding-log hit as @fastify/rate-limit reads a count: `current` past `max` means refused. */
function asRateLimitCount (hit: HitResult, max: number): { current: number, ttl: number } {
  return { current: hit.allowed ? max - hit.remaining : max + 1, ttl: hit.resetMs }
}

function storeAdapterClass (store: SlidingWindowStore, max: number): new () => object {
  return class SlidingWindowAdapter {
    incr (key: string, callback: IncrCallback): void {
      if (store.hitSync !== undefined) {
        callback(null, asRateLimitCount(store.hitSync(key), max))
        return
      }
      store.hit(key).then((hit) => { callback(null, asRateLimitCount(hit, max)) }, callback)
    }

    // One allowance per client: a route with a limit of its own is refused when it is declared.
    child (): never {
      throw new Error('rate-limit: per-route max/timeWindow are not supported (one allowance per client)')
    }
  }
}

/** @fastify/rate-limit's onRequest hook runs after CORS's and before the body is read (D22). */
const rateLimitPlugin: FastifyPluginAsync<RateLimitPluginOptions> = async (app, options) => {
  const store = options.store ?? await createStore(options.redisUrl, app.log)
  const max = store.max ?? DEFAULT_MAX

  // Decided once per route as it is declared; this also covers routes a library declares (the docs UI).
  const unlimited = (url: string): boolean => (options.unlimitedPaths ?? []).some((path) =>
    path.endsWith('/*') ? url === path.slice(0, -2) || url.startsWith(path.slice(0, -1)) : url === path)
  app.addHook('onRoute', (route) => {
    if (unlimited(route.url)) route.config = { ...route.config, rateLimit: false }
  })

  await app.register(fastifyRateLimit, {
    max,
    timeWindow: store.windowMs ?? DEFAULT_WINDOW_MS,
    enableDraftSpec: true,
    store: storeAdapterClass(store, max) as never,
    // The client's address when it is an IP, else the socket's: a forged value never makes a new key.
    keyGenerator: (request) => clientKey(request.ip, request.socket.remoteAddress),
    errorResponseBuilder: () => new HttpError(429, RATE_LIMIT_DETAIL)
  })

  app.addHook('onClose', async () => {
    await store.close?.()
  })
}

export default fp(rateLimitPlugin, { name: 'rate-limit', fastify: '5.x' })

/** Redis when REDIS_URL is set (one allowance across replicas), else memory; an outage and the recovery logged once each. */
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
