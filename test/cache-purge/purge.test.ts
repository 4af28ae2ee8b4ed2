import diagnostics from 'node:diagnostics_channel'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import { servicePlugins } from '../../src/app.js'
import type { CachePurgePluginOptions } from '../../src/cache-purge/index.js'
import { MAX_TAGS_PER_PURGE, PurgeClient } from '../../src/cache-purge/purge-client.js'
import type { Config } from '../../src/config.js'
import { MemorySlidingWindowStore } from '../../src/rate-limit/memory-store.js'
import { AUTH, HEADER, TOKEN, csv, upload } from '../fixtures/ingest.js'
import { build, resetData, testConfig, testDatabase } from '../helper.js'
import { waitUntil } from '../support/processes.js'

/** D70 purge on publish, against a real HTTP server standing in for the cache. */

t.beforeEach(resetData)

const OCTOBER = csv(HEADER, '15-10-2026,14-11-2026,Nairobi,180.00,171.00,150.50')
const TWO_CYCLES = csv(HEADER, '15-10-2026,14-11-2026,Nairobi,180.00,171.00,150.50', '15-09-2026,14-10-2026,Nairobi,179.00,170.00,149.50')
const LISTS = 'prices latest changes towns cycles feed'

interface Received { method: string, url: string, headers: IncomingMessage['headers'] }

/** A cache that records each request and answers as `answer` says (a status, or nothing at all). */
async function fakeCache (t: Test, answer: (n: number, req: IncomingMessage, res: ServerResponse) => void = (_n, _req, res) => { res.end() }) {
  const received: Received[] = []
  const server = createServer((req, res) => {
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers })
    req.resume()
    answer(received.length, req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/purge`, received }
}

interface LogLine { level: number, msg: string, tags?: string, reason?: string, attempt?: number }

/** The service with the purge plugin's timings shortened and its log lines collected. */
async function purgingApp (t: Test, config: Partial<Config>, timings: CachePurgePluginOptions = {}) {
  const raw: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { raw.push(String(chunk)); done() } })
  const full = testConfig({ ingestToken: TOKEN, ...config })
  const database = await testDatabase()
  const rateLimitStore = new MemorySlidingWindowStore({ max: 1_000_000 })
  const plugins = servicePlugins({ config: full, database, rateLimitStore })
    .map((p) => p.name === 'cache-purge' ? { ...p, options: { ...p.options, ...timings } } : p)
  const app = await build(t, { config: { ingestToken: TOKEN, ...config }, database, rateLimitStore, plugins, logger: { level: 'info', stream } })
  const logs = (): LogLine[] => raw.map((l) => JSON.parse(l) as LogLine).filter((l) => l.msg.startsWith('cache purge'))
  return { app, logs }
}

const until = async (check: () => boolean): Promise<boolean> => await waitUntil(check, 2000, 10)

t.test('[D70] CACHE_PURGE_URL unset: an ingest and a withdrawal send no request at all', async (t) => {
  const sent: string[] = []
  const onHttp = (message: unknown): void => { sent.push(String((message as { request?: { path?: string } }).request?.path)) }
  const onFetch = (message: unknown): void => { sent.push(String((message as { request?: { path?: string } }).request?.path)) }
  diagnostics.subscribe('http.client.request.start', onHttp)
  diagnostics.subscribe('undici:request:create', onFetch)
  t.teardown(() => {
    diagnostics.unsubscribe('http.client.request.start', onHttp)
    diagnostics.unsubscribe('undici:request:create', onFetch)
  })
  const app = await build(t, { config: { ingestToken: TOKEN } })
  t.equal(testConfig().cachePurgeUrl, undefined, 'unset by default')
  const ingested = await upload(app, OCTOBER)
  t.equal(ingested.statusCode, 201)
  t.strictSame(Object.keys(ingested.json()), ['status', 'records_processed', 'timestamp', 'inserted', 'updated', 'unchanged'])
  t.equal((await app.inject({ method: 'DELETE', url: '/v1/cycles/2026-10-15', headers: AUTH })).statusCode, 200)
  await app.cachePurge.changed(['2026-10-15'])
  t.strictSame(sent, [], 'nothing left the process')
  t.notMatch((await app.inject('/metrics')).body, /fuel_cache_purges_total/, 'and no purge metric is registered')
})

t.test('[D70] an ingest sends one PURGE of the lists and its cycles, with the token, once the new cycle is readable', async (t) => {
  const replica: { app?: FastifyInstance } = {}
  const seenLatest: string[] = []
  const cache = await fakeCache(t, (_n, _req, res) => {
    // What a client would get from a replica at the moment the cache drops its copies.
    void replica.app?.inject('/v1/prices/latest').then((r) => {
      seenLatest.push(r.json()[0]?.valid_from)
      res.end()
    })
  })
  const { app } = await purgingApp(t, { cachePurgeUrl: cache.url, cachePurgeToken: 'purge-secret' })
  replica.app = app
  t.equal((await app.inject('/v1/prices/latest')).json().length, 0, 'the replica held an empty latest before')
  t.equal((await upload(app, TWO_CYCLES)).statusCode, 201)
  t.equal(cache.received.length, 1, 'one request for the change')
  t.match(cache.received[0], {
    method: 'PURGE',
    url: '/purge',
    headers: { 'surrogate-key': `${LISTS} cycle-2026-10-15 cycle-2026-09-15`, authorization: 'Bearer purge-secret' }
  })
  t.strictSame(seenLatest, ['2026-10-15'], 'the replica already answered with the new cycle')
  t.match((await app.inject('/metrics')).body, /fuel_cache_purges_total\{outcome="delivered"\} 1/)
})

t.test('[D70] a withdrawal sends one PURGE of the lists and the withdrawn cycle; no token, no Authorization', async (t) => {
  const cache = await fakeCache(t)
  const { app } = await purgingApp(t, { cachePurgeUrl: cache.url })
  t.equal((await upload(app, OCTOBER)).statusCode, 201)
  t.equal((await app.inject({ method: 'DELETE', url: '/v1/cycles/2026-10-15', headers: AUTH })).statusCode, 200)
  t.equal(cache.received.length, 2)
  t.equal(cache.received[1]?.headers['surrogate-key'], `${LISTS} cycle-2026-10-15`)
  t.equal(cache.received[1]?.headers.authorization, undefined)
  // Refused writes change nothing and purge nothing.
  t.equal((await app.inject({ method: 'DELETE', url: '/v1/cycles/2026-10-15', headers: AUTH })).statusCode, 404)
  t.equal((await upload(app, csv(HEADER, '15-10-2026,14-11-2026,Nairobi,abc,171.00,150.50'))).statusCode, 400)
  t.equal(cache.received.length, 2)
})

t.test('[D70] a cache that is down: the write succeeds, is retried in the background, and logged once, then given up', async (t) => {
  const cache = await fakeCache(t)
  const downUrl = cache.url.replace(/:\d+\//, ':1/') // nothing listens on port 1
  const { app, logs } = await purgingApp(t, { cachePurgeUrl: downUrl }, { retryDelaysMs: [10, 10] })
  t.equal((await upload(app, OCTOBER)).statusCode, 201)
  await until(() => logs().length === 2)
  t.match(logs(), [
    { level: 40, msg: 'cache purge failed; retrying in the background', reason: 'ECONNREFUSED', tags: `${LISTS} cycle-2026-10-15` },
    { level: 50, msg: /^cache purge given up/, attempt: 3, reason: 'ECONNREFUSED' }
  ])
  t.equal(logs().length, 2, 'one warning, one verdict: not a line per attempt')
  t.match((await app.inject('/metrics')).body, /fuel_cache_purges_total\{outcome="given_up"\} 1/)
})

t.test('[D70] a 503 is retried and a later success logged; a 403 is not retried', async (t) => {
  const flaky = await fakeCache(t, (n, _req, res) => { res.statusCode = n === 1 ? 503 : 200; res.end() })
  const { app, logs } = await purgingApp(t, { cachePurgeUrl: flaky.url }, { retryDelaysMs: [10, 10] })
  t.equal((await upload(app, OCTOBER)).statusCode, 201)
  await until(() => logs().length === 2)
  t.equal(flaky.received.length, 2)
  t.match(logs(), [{ level: 40, reason: 'HTTP 503' }, { level: 30, msg: 'cache purge delivered after a retry', attempt: 2 }])

  const refusing = await fakeCache(t, (_n, _req, res) => { res.statusCode = 403; res.end() })
  const second = await purgingApp(t, { cachePurgeUrl: refusing.url }, { retryDelaysMs: [10, 10] })
  t.equal((await upload(second.app, OCTOBER)).statusCode, 201)
  await until(() => second.logs().length === 1)
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(refusing.received.length, 1, 'a refusal is final')
  t.match(second.logs(), [{ level: 50, msg: /^cache purge refused/, reason: 'HTTP 403' }])
})

t.test('[D70] a cache that never answers holds the write\'s answer no longer than the bound', async (t) => {
  const silent = await fakeCache(t, () => {})
  const { app, logs } = await purgingApp(t, { cachePurgeUrl: silent.url }, { waitMs: 50, attemptTimeoutMs: 30_000, retryDelaysMs: [] })
  t.equal((await upload(app, OCTOBER)).statusCode, 201)
  // the write may answer before the request reaches the cache: the bound is on the answer, not the delivery
  await until(() => silent.received.length === 1)
  t.equal(silent.received.length, 1, 'the purge was asked')
  t.strictSame(logs(), [], 'and the write answered while the attempt was still waiting for the cache')
  await app.close()
  t.match(logs(), [{ level: 50, msg: /^cache purge abandoned at shutdown/ }])
})

t.test('[D70] one attempt is bounded too: a silent cache is given up after attemptTimeoutMs', async (t) => {
  const silent = await fakeCache(t, () => {})
  const lines: LogLine[] = []
  const log = pino({ level: 'info' }, new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk)) as LogLine); done() } }))
  const client = new PurgeClient({ url: silent.url, log, attemptTimeoutMs: 100, waitMs: 5000, retryDelaysMs: [] })
  await client.purge(['towns'])
  await until(() => lines.length === 1)
  t.match(lines, [{ level: 50, msg: /^cache purge given up/, reason: 'no answer within 100 ms', tags: 'towns' }])
})

t.test('[D70] at shutdown a pending retry stops, logged with its tags for a purge by hand', async (t) => {
  const failing = await fakeCache(t, (_n, _req, res) => { res.statusCode = 500; res.end() })
  const { app, logs } = await purgingApp(t, { cachePurgeUrl: failing.url }, { retryDelaysMs: [60_000] })
  t.equal((await upload(app, OCTOBER)).statusCode, 201)
  await until(() => logs().length === 1)
  await app.close()
  await until(() => logs().length === 2)
  t.match(logs()[1], { level: 50, msg: /^cache purge abandoned at shutdown/, tags: `${LISTS} cycle-2026-10-15` })
  t.equal(failing.received.length, 1)
})

t.test('[D70] a change to many cycles is split into purges of at most 100 tags', async (t) => {
  const cache = await fakeCache(t)
  const client = new PurgeClient({ url: cache.url, log: pino({ level: 'silent' }) })
  const tags = Array.from({ length: 230 }, (_, i) => `cycle-${2000 + Math.floor(i / 12)}-${String((i % 12) + 1).padStart(2, '0')}-15`)
  await client.purge(tags)
  const sent = cache.received.map((r) => String(r.headers['surrogate-key']).split(' '))
  t.strictSame(sent.map((s) => s.length).sort((x, y) => y - x), [MAX_TAGS_PER_PURGE, MAX_TAGS_PER_PURGE, 30])
  t.strictSame(sent.flat().sort(), [...tags].sort(), 'every tag once')
})
