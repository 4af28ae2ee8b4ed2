import { request as httpRequest, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { servicePlugins } from '../../src/app.js'
import { clientAddressOf, MAX_LEARNED_URLS, ReadyLane, type ReadyLanePolicies } from '../../src/http/ready-lane.js'
import { requestLogsWritten } from '../../src/http/lazy-logger.js'
import { readyBody } from '../../src/http/body.js'
import { MemorySlidingWindowStore } from '../../src/ratelimit/memory-store.js'
import { build, insertPrices, testConfig, testDatabase, type BuildOptions } from '../helper.js'
import { seedFixture } from '../routes/_fixtures.js'

/**
 * D45: the ready lane answers a repeated cached read before Fastify's lifecycle. Its answers
 * must be byte for byte what Fastify's path sends: every test here compares the two over real
 * sockets (inject() never meets the lane), and counts which of them answered.
 */

t.before(seedFixture)

interface Answer {
  status: number
  /** Every header in the order it was sent, Date left out (the one that differs by the clock). */
  headers: Array<[string, string]>
  body: Buffer
}

async function get (port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path, headers }, resolve).on('error', reject).end()
  })
  const chunks: Buffer[] = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  const pairs: Array<[string, string]> = []
  for (let i = 0; i < response.rawHeaders.length; i += 2) {
    const name = (response.rawHeaders[i] as string).toLowerCase()
    if (name !== 'date') pairs.push([name, response.rawHeaders[i + 1] as string])
  }
  return { status: response.statusCode as number, headers: pairs, body: Buffer.concat(chunks) }
}

async function listening (t: Test, options: BuildOptions & { lane?: boolean } = {}): Promise<{ app: FastifyInstance, port: number }> {
  const config = testConfig(options.config)
  const database = await testDatabase()
  const rateLimitStore = options.rateLimitStore ?? new MemorySlidingWindowStore({ max: options.rateLimitMax ?? 1_000_000 })
  const plugins = servicePlugins({ config, database, rateLimitStore })
    .map((p) => p.name === 'ready-lane' ? { ...p, options: { ...p.options, enabled: options.lane ?? true } } : p)
  const app = await build(t, { ...options, database, rateLimitStore, plugins })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return { app, port: (app.server.address() as AddressInfo).port }
}

/** The lane's own tally, as /metrics exposes it. */
async function laneAnswers (app: FastifyInstance): Promise<number> {
  const text = (await app.inject('/metrics')).body
  const line = text.split('\n').find((l) => l.startsWith('fuel_ready_lane_answers_total '))
  return Number(line?.split(' ')[1])
}

const URLS = [
  '/v1/prices/latest',
  '/v1/prices/latest?town=nairobi',
  '/v1/prices/latest?town=Atlantis',
  '/v1/prices/latest?town=',
  '/v1/towns',
  '/v1/prices?limit=100',
  '/v1/prices?town=Mombasa&limit=2&offset=1',
  '/v1/prices/changes',
  '/v1/prices/changes?town=nairobi',
  '/v1/cycles',
  '/v1/cycles?limit=2&offset=1',
  '/v1/cycles/feed.atom',
  '/v1/cycles/2026-10-15'
]

const HEADER_SETS: Array<Record<string, string>> = [
  {},
  { 'accept-encoding': 'gzip, deflate, br' },
  { 'accept-encoding': 'gzip' },
  { 'accept-encoding': 'br;q=0, gzip;q=0.5' },
  { origin: 'https://fuelkenya.com' },
  { origin: 'https://evil.example' },
  { accept: 'application/json' },
  { accept: 'text/csv;q=0.5, application/json' }
]

t.test('[D45] a repeated cached read: the lane sends the status, headers (in order) and bytes Fastify\'s path sends', async (t) => {
  // D52: one feed body for both servers (a derived self link would name each one's port).
  const config = { publicUrl: 'https://api.fuelkenya.com' }
  const lane = await listening(t, { config })
  const fastify = await listening(t, { config, lane: false })
  // The first request of each URL goes through Fastify (and teaches the lane the URL).
  for (const url of URLS) {
    t.equal((await get(lane.port, url, { 'x-forwarded-for': '10.9.9.9' })).status, 200, url)
    await get(fastify.port, url, { 'x-forwarded-for': '10.9.9.9' })
  }
  t.equal(await laneAnswers(lane.app), 0)
  let client = 0
  let compared = 0
  for (const url of URLS) {
    for (const headers of HEADER_SETS) {
      const ip = `10.0.0.${++client}` // each side's limiter sees the same client once
      const viaLane = await get(lane.port, url, { ...headers, 'x-forwarded-for': ip })
      const viaFastify = await get(fastify.port, url, { ...headers, 'x-forwarded-for': ip })
      t.strictSame(viaLane, viaFastify, `${url} ${JSON.stringify(headers)}`)
      compared++
      // D18: the same ETag back is a 304 on both, with the same headers and no body.
      const etag = viaFastify.headers.find(([name]) => name === 'etag')?.[1] as string
      const again = { ...headers, 'if-none-match': etag, 'x-forwarded-for': ip }
      const notModified = await get(lane.port, url, again)
      t.equal(notModified.status, 304)
      t.strictSame(notModified, await get(fastify.port, url, again), `304 ${url} ${JSON.stringify(headers)}`)
      compared++
    }
  }
  t.equal(await laneAnswers(lane.app), compared, 'every compared request was the lane\'s')
  t.equal(await laneAnswers(fastify.app), 0, 'the other app never used it')
  // The answers are counted in the route's request metrics as Fastify's would be.
  const metrics = (await lane.app.inject('/metrics')).body
  t.match(metrics, /http_requests_total\{method="GET",route="\/v1\/prices\/latest",status_code="200"\} 36\n/)
  t.match(metrics, /http_requests_total\{method="GET",route="\/v1\/prices\/latest",status_code="304"\} 32\n/)
})

t.test('[D45][D22] a request the lane counted is never counted again: the 429 is Fastify\'s, with the same headers', async (t) => {
  const url = '/v1/prices/latest?town=mombasa'
  const lane = await listening(t, { rateLimitMax: 3 })
  const fastify = await listening(t, { rateLimitMax: 3, lane: false })
  const both = async (ip: string): Promise<Answer> => {
    const viaLane = await get(lane.port, url, { 'x-forwarded-for': ip })
    t.strictSame(viaLane, await get(fastify.port, url, { 'x-forwarded-for': ip }))
    return viaLane
  }
  const remaining = async (ip: string): Promise<string | undefined> => (await both(ip)).headers.find(([n]) => n === 'ratelimit-remaining')?.[1]
  t.equal(await remaining('10.1.1.1'), '2') // Fastify's path; the lane learns the URL
  t.equal(await remaining('10.1.1.1'), '1') // the lane
  t.equal(await laneAnswers(lane.app), 1)
  // An ingest elsewhere clears the cache: the lane counts the request, finds no body, and
  // Fastify's path answers it with that count (1 → 0, not 1 → -1).
  lane.app.readCache.clear()
  fastify.app.readCache.clear()
  t.equal(await remaining('10.1.1.1'), '0')
  t.equal(await laneAnswers(lane.app), 1)
  const refused = await both('10.1.1.1')
  t.equal(refused.status, 429)
  t.strictSame(JSON.parse(refused.body.toString()), { detail: 'Rate limit exceeded. Try again later.' })
  t.equal(refused.headers.find(([n]) => n === 'retry-after')?.[1], '60')
  t.equal(await laneAnswers(lane.app), 1, 'a refused request is Fastify\'s answer')
  t.equal(await remaining('10.1.1.2'), '2', 'another client has its own allowance')
  t.equal(await laneAnswers(lane.app), 2)
})

t.test('[D45] what the lane does not answer goes to Fastify: CSV, HEAD, a body, a new query, the data after an ingest', async (t) => {
  const { app, port } = await listening(t)
  await get(port, '/v1/prices?limit=2')
  await get(port, '/v1/prices?limit=2')
  t.equal(await laneAnswers(app), 1)

  const csv = await get(port, '/v1/prices?limit=2', { accept: 'text/csv' })
  t.equal(csv.headers.find(([n]) => n === 'content-type')?.[1], 'text/csv; charset=utf-8')
  t.equal(csv.body.toString().split(/\r?\n/)[0], 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)')
  const head = await new Promise<IncomingMessage>((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path: '/v1/prices?limit=2', method: 'HEAD' }, resolve).on('error', reject).end()
  })
  head.resume()
  t.equal(head.statusCode, 200)
  t.equal((await get(port, '/v1/prices?limit=02')).status, 200, 'an equivalent URL is learned on its own')
  t.equal(await laneAnswers(app), 1)

  // An ingest (here: rows added, then the cache cleared as the ingest path does) is seen at once.
  const before = JSON.parse((await get(port, '/v1/prices/latest?town=nairobi')).body.toString()) as Array<{ valid_from: string }>
  t.equal(before[0]?.valid_from, '2026-10-15')
  await insertPrices([{ town: 'Nairobi', superPetrol: '199.99', diesel: '188.88', kerosene: '177.77', validFrom: '2026-11-15' }])
  t.teardown(seedFixture)
  app.readCache.clear()
  const after = JSON.parse((await get(port, '/v1/prices/latest?town=nairobi')).body.toString()) as Array<{ valid_from: string, super_petrol: number }>
  t.strictSame([after[0]?.valid_from, after[0]?.super_petrol], ['2026-11-15', 199.99])
  const answered = await laneAnswers(app)
  t.equal((await get(port, '/v1/prices/latest?town=nairobi')).status, 200)
  t.equal(await laneAnswers(app), answered + 1, 'and the lane answers it again from there')
})

t.test('[D45] a GET that announces a body is Fastify\'s (its body is drained, D29)', async (t) => {
  const { app, port } = await listening(t)
  await get(port, '/v1/towns')
  const response = await fetch(`http://127.0.0.1:${port}/v1/towns`, { method: 'GET', headers: { 'content-length': '0' } })
  t.equal(response.status, 200)
  t.equal(await laneAnswers(app), 1, 'Content-Length: 0 is no body')
  const withBody = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/towns', method: 'GET', headers: { 'content-type': 'text/plain', 'content-length': '5' } }, resolve)
    req.on('error', reject).end('hello')
  })
  withBody.resume()
  t.equal(withBody.statusCode, 200)
  t.equal(await laneAnswers(app), 1)
})

t.test('[D45] the lane is off where it could not match Fastify\'s path', async (t) => {
  t.test('request logging at info (Fastify writes two lines per request)', async (t) => {
    const lines: string[] = []
    const { app, port } = await listening(t, { logger: { level: 'info', stream: { write: (line: string) => { lines.push(line) } } } })
    await get(port, '/v1/towns')
    await get(port, '/v1/towns')
    t.equal(await laneAnswers(app), 0)
    t.equal(lines.filter((l) => l.includes('"msg":"incoming request"') && l.includes('"url":"/v1/towns"')).length, 2)
  })
  t.test('a hop-count TRUST_PROXY (Fastify decides that one itself)', async (t) => {
    const { app, port } = await listening(t, { config: { trustProxy: 1 } })
    await get(port, '/v1/towns')
    await get(port, '/v1/towns')
    t.equal(await laneAnswers(app), 0)
  })
  t.test('a store that cannot answer synchronously (Redis)', async (t) => {
    const memory = new MemorySlidingWindowStore()
    const { app, port } = await listening(t, { rateLimitStore: { hit: async (key) => memory.hit(key) } })
    await get(port, '/v1/towns')
    await get(port, '/v1/towns')
    t.equal(await laneAnswers(app), 0)
  })
})

t.test('[D45][D23] the lane keys the limiter by the address Fastify\'s request.ip gives', async (t) => {
  const cases: Array<{ trustProxy: boolean | string[], xff: string | undefined, expected: string }> = [
    { trustProxy: true, xff: '203.0.113.7', expected: '203.0.113.7' },
    { trustProxy: true, xff: ' 203.0.113.7 , 10.0.0.1', expected: '203.0.113.7' },
    { trustProxy: true, xff: ', 198.51.100.2,10.0.0.1', expected: '198.51.100.2' },
    { trustProxy: true, xff: undefined, expected: '127.0.0.1' },
    { trustProxy: false, xff: '203.0.113.7', expected: '127.0.0.1' },
    { trustProxy: ['127.0.0.1'], xff: '203.0.113.7, 198.51.100.2', expected: '198.51.100.2' },
    { trustProxy: ['10.0.0.0/8'], xff: '203.0.113.7', expected: '127.0.0.1' }
  ]
  for (const { trustProxy, xff, expected } of cases) {
    const key = clientAddressOf(trustProxy)
    const request = { headers: xff === undefined ? {} : { 'x-forwarded-for': xff }, socket: { remoteAddress: '127.0.0.1' } }
    t.equal(key?.(request as never), expected, `${JSON.stringify(trustProxy)} ${String(xff)}`)
  }
  t.equal(clientAddressOf(2), undefined)
  // And over a socket: the lane's key and Fastify's are one allowance.
  const { port } = await listening(t, { rateLimitMax: 2, config: { trustProxy: true } })
  t.equal((await get(port, '/v1/towns', { 'x-forwarded-for': '203.0.113.9, 10.0.0.1' })).status, 200)
  t.equal((await get(port, '/v1/towns', { 'x-forwarded-for': ' 203.0.113.9' })).status, 200)
  t.equal((await get(port, '/v1/towns', { 'x-forwarded-for': '203.0.113.9,10.0.0.2' })).status, 429)
})

t.test('[D45] requestLogsWritten: only a logger that writes info lines', async (t) => {
  const levels = { values: { fatal: 60, error: 50, warn: 40, info: 30, debug: 20, trace: 10 } }
  t.equal(requestLogsWritten({ level: 'info', levels } as never, undefined), true)
  t.equal(requestLogsWritten({ level: 'debug', levels } as never, undefined), true)
  t.equal(requestLogsWritten({ level: 'warn', levels } as never, undefined), false)
  t.equal(requestLogsWritten({ level: 'silent', levels: { values: { ...levels.values, silent: Infinity } } } as never, undefined), false)
  t.equal(requestLogsWritten({ level: 'info', levels } as never, true), false, 'disableRequestLogging')
  t.equal(requestLogsWritten({} as never, undefined), false, 'Fastify\'s no-op logger')
  t.equal(requestLogsWritten({ level: 'custom' } as never, undefined), true, 'a logger of unknown levels is assumed to write')
})

t.test(`[D45] the learned URLs are bounded (${MAX_LEARNED_URLS}), starting over when full`, async (t) => {
  const policies: ReadyLanePolicies = {
    allowOrigin: () => undefined,
    exposeHeaders: '',
    hit: () => ({ allowed: true, remaining: 1, resetMs: 1000 }),
    limitHeaders: () => ({ limit: '2', remaining: '1', reset: '1' }),
    passHit: () => {},
    publicCacheControl: 'public',
    closing: () => false
  }
  const lane = new ReadyLane(policies, () => '127.0.0.1')
  const route = { record: () => {}, negotiatesCsv: false, contentType: 'application/json' }
  const body = readyBody('[]')
  for (let i = 0; i < MAX_LEARNED_URLS; i++) lane.learn(`/v1/towns?x=${i}`, route, () => body)
  t.equal(lane.size, MAX_LEARNED_URLS)
  lane.learn('/v1/towns?x=0', route, () => body)
  t.equal(lane.size, MAX_LEARNED_URLS, 'a URL learned again is not added twice')
  lane.learn('/v1/towns?x=new', route, () => body)
  t.equal(lane.size, 1)
})

t.test('[D45] while the app closes, every request goes to Fastify (whose answers say Connection: close)', async (t) => {
  let closing = false
  const lane = new ReadyLane({
    allowOrigin: () => undefined,
    exposeHeaders: 'ETag',
    hit: () => ({ allowed: true, remaining: 59, resetMs: 60_000 }),
    limitHeaders: () => ({ limit: '60', remaining: '59', reset: '60' }),
    passHit: () => {},
    publicCacheControl: 'public',
    closing: () => closing
  }, () => '127.0.0.1')
  lane.learn('/v1/towns', { record: () => {}, negotiatesCsv: false, contentType: 'application/json' }, () => readyBody('["Nairobi"]'))
  const { createServer } = await import('node:http')
  const server = createServer((request, response) => {
    if (lane.answer(request, response)) return
    response.writeHead(299, { 'content-length': '0' })
    response.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  const port = (server.address() as AddressInfo).port
  const open = await get(port, '/v1/towns')
  t.equal(open.status, 200)
  t.equal(open.body.toString(), '["Nairobi"]')
  closing = true
  t.equal((await get(port, '/v1/towns')).status, 299, 'passed on')
  t.equal(lane.answered, 1)
})

t.test('[D45][D52] a feed whose self link comes from the request is never the lane\'s', async (t) => {
  const lane = await listening(t)
  const url = '/v1/cycles/feed.atom'
  await get(lane.port, url, { 'x-forwarded-for': '10.7.7.7' })
  const other = await get(lane.port, url, { 'x-forwarded-for': '10.7.7.8', 'x-forwarded-host': 'feeds.example' })
  t.match(other.body.toString(), '<link rel="self" type="application/atom+xml" href="http://feeds.example/v1/cycles/feed.atom"/>')
  t.equal(await laneAnswers(lane.app), 0)
})
