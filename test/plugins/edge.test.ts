import type { Test } from 'tap'
import t from '../support/file-test.js'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import corsPlugin from '../../src/cors/index.js'
import rateLimitPlugin from '../../src/rate-limit/index.js'
import { DEFAULT_CORS_ORIGINS } from '../../src/config.js'
import { operations } from '../../src/generated/openapi.js'
import { MemorySlidingWindowStore } from '../../src/rate-limit/memory-store.js'
import { RedisSlidingWindowStore } from '../../src/rate-limit/redis-store.js'
import type { SlidingWindowStore } from '../../src/rate-limit/sliding-window.js'
import { createRedisClient } from '../../src/rate-limit/redis-client.js'
import { TEST_REDIS_URL, needs } from '../services.js'

const T0 = 1_700_000_000_000
const LIMITED_BODY = '{"detail":"Rate limit exceeded. Try again later."}'
const EXPOSED = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, ETag'
const ALLOWED_ORIGIN = 'http://localhost:3000'

interface Clock { now: number }

/**
 * A minimal app shaped like the service's edge: the two plugins, one limited route, the exempt
 * health route, and an error handler that renders anything with statusCode + detail as
 * {"detail": ...} (D19), as the service's single error handler does.
 */
async function startApp (t: Test, options: {
  trustProxy?: boolean
  clock?: Clock
  store?: SlidingWindowStore
  rateLimitFirst?: boolean
} = {}): Promise<{ app: FastifyInstance, url: string, clock: Clock }> {
  const clock = options.clock ?? { now: T0 }
  const store = options.store ?? new MemorySlidingWindowStore({ now: () => clock.now })
  const app = Fastify({ trustProxy: options.trustProxy ?? true })
  app.setErrorHandler((err: { statusCode?: number, detail?: unknown }, _request, reply) => {
    if (typeof err.statusCode === 'number' && err.detail !== undefined) {
      return reply.code(err.statusCode).header('cache-control', 'no-store').send({ detail: err.detail })
    }
    return reply.code(500).send({ detail: 'Internal Server Error' })
  })
  if (options.rateLimitFirst === true) {
    await app.register(rateLimitPlugin, { store })
    await app.register(corsPlugin, { origins: DEFAULT_CORS_ORIGINS })
  } else {
    await app.register(corsPlugin, { origins: DEFAULT_CORS_ORIGINS })
    await app.register(rateLimitPlugin, { store })
  }
  app.get('/v1/prices', async () => [])
  app.post('/v1/ingest/csv', async (_request, reply) => reply.code(201).send({ status: 'success' }))
  app.get('/v1/health', { config: operations.getHealth.config }, async () => ({ status: 'healthy' }))
  // The recipe for counting requests that match no route (which have no route hooks).
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, async (_request, reply) => reply.code(404).send({ detail: 'Not Found' }))
  await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  return { app, url: `http://127.0.0.1:${address.port}`, clock }
}

async function get (url: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await fetch(url, { method, headers })
  const body = await res.text()
  return { status: res.status, headers: res.headers, body }
}

async function getMany (n: number, url: string, headers: Record<string, string> = {}) {
  const results = []
  for (let i = 0; i < n; i++) results.push(await get(url, headers))
  return results
}

function rateHeaders (res: { headers: Headers }) {
  return {
    limit: res.headers.get('ratelimit-limit'),
    remaining: res.headers.get('ratelimit-remaining'),
    reset: res.headers.get('ratelimit-reset'),
    retryAfter: res.headers.get('retry-after')
  }
}

t.test('D22: 60 requests succeed with exact RateLimit headers, the 61st is a JSON 429', async (t) => {
  const { url, clock } = await startApp(t)
  const ok = [await get(`${url}/v1/prices`)]
  clock.now = T0 + 1_000
  ok.push(...await getMany(59, `${url}/v1/prices`))
  t.strictSame(ok.map((r) => r.status), Array(60).fill(200))
  t.strictSame(rateHeaders(ok[0]!), { limit: '60', remaining: '59', reset: '60', retryAfter: null })
  t.strictSame(ok.map((r) => r.headers.get('ratelimit-remaining')), Array.from({ length: 60 }, (_, i) => String(59 - i)))
  // Reset counts to the oldest counted request (T0), not to the latest one.
  t.strictSame(rateHeaders(ok[59]!), { limit: '60', remaining: '0', reset: '59', retryAfter: null })
  t.equal(ok[0]!.headers.get('x-ratelimit-limit'), null, 'IETF draft names only')

  clock.now = T0 + 30_500 // the oldest counted request leaves the window in 29.5 s
  const limited = await get(`${url}/v1/prices`)
  t.equal(limited.status, 429)
  t.equal(limited.body, LIMITED_BODY)
  t.equal(limited.headers.get('content-type'), 'application/json; charset=utf-8')
  t.strictSame(rateHeaders(limited), { limit: '60', remaining: '0', reset: '30', retryAfter: '30' })
  t.equal(limited.headers.get('cache-control'), 'no-store')

  clock.now = T0 + 60_000 // exactly one slot frees (D22: the 429 did not extend the block)
  const again = await get(`${url}/v1/prices`)
  t.equal(again.status, 200)
  t.strictSame(rateHeaders(again), { limit: '60', remaining: '0', reset: '1', retryAfter: null })
  const limitedAgain = await get(`${url}/v1/prices`)
  t.equal(limitedAgain.status, 429)
  t.strictSame(rateHeaders(limitedAgain), { limit: '60', remaining: '0', reset: '1', retryAfter: '1' })
})

t.test('D22: the allowance is shared by all limited paths, including POST and unknown paths', async (t) => {
  const { url } = await startApp(t)
  await getMany(20, `${url}/v1/prices`)
  const post = await fetch(`${url}/v1/ingest/csv`, { method: 'POST' })
  t.equal(post.status, 201)
  t.equal(post.headers.get('ratelimit-remaining'), '39')
  const missing = await get(`${url}/v1/nowhere`)
  t.equal(missing.status, 404)
  t.equal(missing.headers.get('ratelimit-remaining'), '38')
  await getMany(38, `${url}/v1/nowhere`)
  const limited = await get(`${url}/v1/nowhere`)
  t.equal(limited.status, 429)
  t.equal(limited.body, LIMITED_BODY)
})

t.test('D22: a HEAD request (the route Fastify implies from a GET) is counted once, like its GET', async (t) => {
  const { url } = await startApp(t)
  const head = await get(`${url}/v1/prices`, {}, 'HEAD')
  t.equal(head.status, 200)
  t.strictSame(rateHeaders(head), { limit: '60', remaining: '59', reset: '60', retryAfter: null })
  const after = await get(`${url}/v1/prices`)
  t.equal(after.headers.get('ratelimit-remaining'), '58')
})

t.test('D23: with trustProxy the left-most X-Forwarded-For address is the key', async (t) => {
  const { url } = await startApp(t, { trustProxy: true })
  const first = await getMany(60, `${url}/v1/prices`, { 'x-forwarded-for': '1.2.3.4, 10.0.0.1' })
  t.strictSame(first.map((r) => r.status), Array(60).fill(200))
  t.equal((await get(`${url}/v1/prices`, { 'x-forwarded-for': '1.2.3.4, 10.0.0.1' })).status, 429)
  t.equal((await get(`${url}/v1/prices`, { 'x-forwarded-for': '1.2.3.4' })).status, 429, 'same client, other proxy path')
  const other = await get(`${url}/v1/prices`, { 'x-forwarded-for': '5.6.7.8, 10.0.0.1' })
  t.equal(other.status, 200)
  t.equal(other.headers.get('ratelimit-remaining'), '59')
  const direct = await get(`${url}/v1/prices`)
  t.equal(direct.status, 200, 'without the header the socket address is the key')
  t.equal(direct.headers.get('ratelimit-remaining'), '59')
})

t.test('D23: with trustProxy false X-Forwarded-For is ignored', async (t) => {
  const { url } = await startApp(t, { trustProxy: false })
  const results = []
  for (let i = 0; i < 60; i++) {
    results.push(await get(`${url}/v1/prices`, { 'x-forwarded-for': `9.9.9.${i}` }))
  }
  t.strictSame(results.map((r) => r.status), Array(60).fill(200))
  const limited = await get(`${url}/v1/prices`, { 'x-forwarded-for': '8.8.8.8' })
  t.equal(limited.status, 429)
  t.equal(limited.body, LIMITED_BODY)
})

t.test('D22: GET /v1/health is never limited and not counted', async (t) => {
  const { url } = await startApp(t)
  const health = await getMany(70, `${url}/v1/health`)
  t.strictSame(health.map((r) => r.status), Array(70).fill(200))
  t.equal(health[69]!.headers.get('ratelimit-limit'), null)
  t.equal(health[69]!.body, '{"status":"healthy"}')
  const prices = await get(`${url}/v1/prices`)
  t.equal(prices.headers.get('ratelimit-remaining'), '59')
  await getMany(59, `${url}/v1/prices`)
  t.equal((await get(`${url}/v1/prices`)).status, 429)
  t.equal((await get(`${url}/v1/health`)).status, 200, 'still healthy for a blocked client')
})

t.test('D24: a preflight from an allowed origin is answered and not counted (D22)', async (t) => {
  const { url } = await startApp(t)
  const preflightHeaders = {
    origin: ALLOWED_ORIGIN,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization'
  }
  const preflights = []
  for (let i = 0; i < 70; i++) preflights.push(await get(`${url}/v1/ingest/csv`, preflightHeaders, 'OPTIONS'))
  t.strictSame(preflights.map((r) => r.status), Array(70).fill(204))
  const p = preflights[0]!
  t.equal(p.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN)
  t.equal(p.headers.get('access-control-allow-methods'), 'GET, DELETE, POST, OPTIONS')
  t.equal(p.headers.get('access-control-allow-headers'), 'Authorization, Content-Type')
  t.equal(p.headers.get('ratelimit-limit'), null)
  t.equal(p.body, '')

  const first = await get(`${url}/v1/prices`, { origin: ALLOWED_ORIGIN })
  t.equal(first.headers.get('ratelimit-remaining'), '59', '70 preflights consumed nothing')
  await getMany(59, `${url}/v1/prices`)
  t.equal((await get(`${url}/v1/prices`, preflightHeaders, 'OPTIONS')).status, 204, 'a blocked client may still preflight')
  const bare = await get(`${url}/v1/prices`, {}, 'OPTIONS')
  t.equal(bare.status, 204, 'OPTIONS without preflight headers: no text/plain 400 (D19)')
})

t.test('D24: another origin gets no Access-Control-Allow-Origin', async (t) => {
  const { url } = await startApp(t)
  for (const origin of DEFAULT_CORS_ORIGINS) {
    const res = await get(`${url}/v1/prices`, { origin })
    t.equal(res.headers.get('access-control-allow-origin'), origin)
    t.equal(res.headers.get('access-control-expose-headers'), EXPOSED)
    t.equal(res.headers.get('vary'), 'Origin')
  }
  for (const origin of ['https://evil.example', 'https://fuelkenya.com.evil.example', 'http://localhost:3001', 'null']) {
    const res = await get(`${url}/v1/prices`, { origin })
    t.equal(res.status, 200)
    t.equal(res.headers.get('access-control-allow-origin'), null, origin)
    const preflight = await get(`${url}/v1/prices`, { origin, 'access-control-request-method': 'GET' }, 'OPTIONS')
    t.equal(preflight.headers.get('access-control-allow-origin'), null, `${origin} preflight`)
  }
})

for (const rateLimitFirst of [false, true]) {
  t.test(`D22: a 429 to an allowed origin carries its CORS headers (rate-limit registered ${rateLimitFirst ? 'before' : 'after'} cors)`, async (t) => {
    const { url } = await startApp(t, { rateLimitFirst })
    await getMany(60, `${url}/v1/prices`, { origin: ALLOWED_ORIGIN })
    const limited = await get(`${url}/v1/prices`, { origin: ALLOWED_ORIGIN })
    t.equal(limited.status, 429)
    t.equal(limited.body, LIMITED_BODY)
    t.equal(limited.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN)
    t.equal(limited.headers.get('access-control-expose-headers'), EXPOSED)
    t.strictSame(rateHeaders(limited), { limit: '60', remaining: '0', reset: '60', retryAfter: '60' })
  })
}

t.test('D22: over the Redis store the edge behaves the same', await needs('redis'), async (t) => {
  const prefix = `test:edge:${process.pid}:${randomBytes(4).toString('hex')}:`
  const redis = createRedisClient(TEST_REDIS_URL)
  if (redis.status !== 'ready') await once(redis, 'ready')
  const admin = redis.duplicate()
  await once(admin, 'ready')
  t.teardown(async () => {
    await deleteKeys(admin, prefix)
    await admin.quit()
  })
  const clock = { now: T0 }
  const store = new RedisSlidingWindowStore({ redis, prefix, now: () => clock.now })
  const { url } = await startApp(t, { store, clock }) // app.close() closes the store and its client
  const ok = await getMany(60, `${url}/v1/prices`)
  t.strictSame(rateHeaders(ok[0]!), { limit: '60', remaining: '59', reset: '60', retryAfter: null })
  clock.now = T0 + 59_001
  const limited = await get(`${url}/v1/prices`)
  t.equal(limited.status, 429)
  t.equal(limited.body, LIMITED_BODY)
  t.strictSame(rateHeaders(limited), { limit: '60', remaining: '0', reset: '1', retryAfter: '1' })
  t.equal(await admin.zcard(`${prefix}127.0.0.1`), 60)
})

async function deleteKeys (redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}*`)
  if (keys.length > 0) await redis.del(...keys)
}

t.test('the plugin announces the store\'s own limits and refuses figures that disagree with it', async (t) => {
  const clock = { now: T0 }
  const store = new MemorySlidingWindowStore({ max: 3, now: () => clock.now })
  const { url } = await startApp(t, { store, clock })
  const results = await getMany(4, `${url}/v1/prices`)
  t.strictSame(results.map((r) => r.status), [200, 200, 200, 429])
  t.strictSame(rateHeaders(results[0]!), { limit: '3', remaining: '2', reset: '60', retryAfter: null })

  const perRoute = Fastify()
  t.teardown(() => perRoute.close())
  await perRoute.register(rateLimitPlugin, { store: new MemorySlidingWindowStore() })
  t.throws(() => perRoute.get('/x', { config: { rateLimit: { max: 10 } } }, async () => 'x'), /per-route/)
})
