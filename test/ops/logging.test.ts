import { Writable } from 'node:stream'
import type { AddressInfo } from 'node:net'
import t from '../support/file-test.js'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { LOG_REDACT, loggerOptions } from '../../src/app.js'
import { SLOW_REQUEST_MS } from '../../src/logging/access-log.js'
import { build, testConfig } from '../helper.js'

/** pino logs: request ids, and tokens never written, whatever the serializers print. */

interface LogLine { reqId?: string, msg?: string, req?: { headers?: Record<string, unknown> } }

/** An app whose log lines are collected, with a request serializer that prints every header. */
async function loggedApp (t: Parameters<typeof build>[0]) {
  const raw: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { raw.push(String(chunk)); done() } })
  const app = await build(t, {
    config: { ingestToken: 'ingest-secret-123' },
    logger: {
      level: 'debug', // D45 logging: the access line of an ordinary request is at debug
      stream,
      serializers: { req: (req: FastifyRequest) => ({ method: req.method, url: req.url, headers: req.headers }) }
    }
  })
  return { app, raw, lines: () => raw.map((l) => JSON.parse(l) as LogLine) }
}

t.test('the authorization and cookie headers are redacted even when headers are logged', async (t) => {
  const { app, raw, lines } = await loggedApp(t)
  await app.inject({ url: '/v1/towns', headers: { authorization: 'Bearer metrics-or-other-secret', cookie: 'session=cookie-secret', 'user-agent': 'probe/1.0' } })
  await app.inject({ method: 'POST', url: '/v1/ingest/csv', headers: { authorization: 'Bearer ingest-secret-123' } })
  await app.inject({ method: 'POST', url: '/v1/ingest/csv', headers: { authorization: 'Bearer wrong-guess-456' } })
  const incoming = lines().filter((l) => l.msg === 'request completed')
  t.equal(incoming.length, 3)
  t.same(incoming.map((l) => l.req?.headers?.authorization), ['[Redacted]', '[Redacted]', '[Redacted]'])
  t.equal(incoming[0]?.req?.headers?.cookie, '[Redacted]')
  t.equal(incoming[0]?.req?.headers?.['user-agent'], 'probe/1.0', 'other headers are still logged')
  const all = raw.join('')
  for (const secret of ['metrics-or-other-secret', 'cookie-secret', 'ingest-secret-123', 'wrong-guess-456']) t.notOk(all.includes(secret), `${secret} never logged`)
})

t.test('request ids: an incoming x-request-id is used, otherwise one is made', async (t) => {
  const { app, lines } = await loggedApp(t)
  await app.inject({ url: '/v1/towns', headers: { 'x-request-id': 'edge-7f3a' } })
  await app.inject('/v1/towns')
  const byRequest = lines().filter((l) => l.msg === 'request completed')
  t.equal(byRequest.length, 2, 'one access line per request')
  t.equal(byRequest[0]?.reqId, 'edge-7f3a')
  const generated = byRequest[1]?.reqId
  t.type(generated, 'string')
  t.not(generated, 'edge-7f3a')
})

t.test('the default logger redacts the same headers', async (t) => {
  t.same(LOG_REDACT, ['req.headers.authorization', 'req.headers.cookie'])
  t.match(loggerOptions(testConfig({ logLevel: 'warn' }), undefined), { level: 'warn', redact: LOG_REDACT })
  t.match(loggerOptions(testConfig(), { level: 'info', redact: ['req.headers["x-api-key"]'] }), {
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]'] }
  }, 'a caller\'s own paths are added, not substituted')
})

/** An app at the default level whose lines are collected. */
async function defaultLevelApp (t: Parameters<typeof build>[0]) {
  const raw: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { raw.push(String(chunk)); done() } })
  const app = await build(t, { config: { ingestToken: 'logging-token' }, logger: { level: 'info', stream } })
  return { app, lines: () => raw.map((l) => JSON.parse(l) as LogLine & { level: number, res?: { statusCode: number }, responseTime?: number }) }
}

t.test('D45 logging: at info an ordinary request writes nothing; a 5xx writes one access line at error, with its cause (D61)', async (t) => {
  const { app, lines } = await defaultLevelApp(t)
  for (const url of ['/v1/towns', '/v1/prices/latest', '/v1/nothing-here', '/v1/prices?limit=0']) await app.inject(url)
  t.same(lines(), [], '200, 404 and 422 answers: no line')
  app.prices.listTowns = async () => { throw new Error('database gone') }
  app.readCache.clear()
  t.equal((await app.inject('/v1/towns')).statusCode, 500)
  const written = lines() as Array<LogLine & { level: number, res?: { statusCode: number }, responseTime?: number, err?: { type: string, message: string, stack?: string } }>
  t.same(written.map((l) => [l.level, l.msg]), [[50, 'request completed']])
  t.equal(written[0]?.res?.statusCode, 500)
  t.type(written[0]?.responseTime, 'number')
  t.match(written[0]?.err, { type: 'Error', message: 'database gone', stack: /^Error: database gone\n {4}at / }, 'the service\'s own fault keeps where it was thrown')
})

/** `finish` listeners on each response as it reaches the onRequest hooks, and its status, over a real socket. */
async function finishListeners (app: FastifyInstance, urls: string[]): Promise<Array<[number, number]>> {
  const counts: number[] = []
  app.addHook('onRequest', (_request, reply, done) => { counts.push(reply.raw.listenerCount('finish')); done() })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const statuses: number[] = []
  for (const url of urls) statuses.push((await fetch(`http://127.0.0.1:${port}${url}`)).status)
  return counts.map((count, i) => [count, statuses[i] as number])
}

const discard = (): Writable => new Writable({ write (_chunk, _encoding, done) { done() } })

t.test('D45 logging: no Fastify response listeners per request, whatever the level', async (t) => {
  const bare = Fastify()
  t.teardown(() => bare.close())
  bare.get('/x', async () => 'x')
  const [[node]] = await finishListeners(bare, ['/x']) as [[number, number]]
  const logged = Fastify({ logger: { level: 'info', stream: discard() } })
  t.teardown(() => logged.close())
  logged.get('/x', async () => 'x')
  t.same(await finishListeners(logged, ['/x']), [[node + 1, 200]], 'Fastify\'s logger adds one (so this check can fail)')
  for (const level of ['info', 'debug']) {
    const app = await build(t, { logger: { level, stream: discard() } })
    t.same(await finishListeners(app, ['/v1/prices/latest', '/v1/towns', '/v1/prices?limit=100', '/v1/nowhere']),
      [[node, 200], [node, 200], [node, 200], [node, 404]], `LOG_LEVEL=${level}: as many as bare Fastify's`)
  }
})

t.test('D45 logging: with Fastify\'s logger off, the service\'s pino still gets the start-up warning, Fastify\'s own warnings and slow answers', async (t) => {
  const raw: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { raw.push(String(chunk)); done() } })
  const app = await build(t, { contract: false, config: { ingestToken: undefined }, logger: { level: 'info', stream } })
  app.get('/twice', (_request, reply) => { void reply.send('first'); void reply.send('second') })
  app.get('/slow', async () => await new Promise((resolve) => setTimeout(() => { resolve('late') }, SLOW_REQUEST_MS + 20)))
  await app.ready()
  t.equal((await app.inject('/twice')).body, 'first')
  t.equal((await app.inject('/slow')).body, 'late')
  const lines = raw.map((l) => JSON.parse(l) as LogLine & { level: number, err?: { code?: string }, res?: { statusCode: number }, responseTime: number })
  t.same(lines.map((l) => [l.level, l.msg?.split(':')[0], l.err?.code]), [
    [40, 'INGEST_TOKEN is not set', undefined],
    [40, 'Reply was already sent, did you forget to "return reply" in "/twice" (GET)?', 'FST_ERR_REP_ALREADY_SENT'],
    [40, 'request completed', undefined]
  ])
  t.match(lines[1]?.reqId, /^req-/, 'Fastify\'s warning carries the request id')
  t.equal(lines[2]?.res?.statusCode, 200)
  t.ok((lines[2]?.responseTime ?? 0) >= SLOW_REQUEST_MS, `responseTime ${lines[2]?.responseTime} ms`)
})

t.test('D45 logging: a streamed body is timed to its end, with one access line', async (t) => {
  const raw: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { raw.push(String(chunk)); done() } })
  const app = await build(t, { config: { ingestToken: 'logging-token' }, logger: { level: 'debug', stream } })
  const res = await app.inject('/v1/prices.csv?limit=2')
  t.equal(res.statusCode, 200)
  const lines = raw.map((l) => JSON.parse(l) as LogLine & { level: number, res?: { statusCode: number }, req?: { url?: string } })
  t.same(lines.map((l) => [l.level, l.msg, l.req?.url, l.res?.statusCode]), [[20, 'request completed', '/v1/prices.csv?limit=2', 200]])
})
