import { Writable } from 'node:stream'
import t from 'tap'
import type { FastifyRequest } from 'fastify'
import { LOG_REDACT, serverOptions } from '../../src/app.js'
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
  t.match(serverOptions(testConfig({ logLevel: 'warn' })).logger, { level: 'warn', redact: LOG_REDACT })
  t.match(serverOptions(testConfig(), { level: 'info', redact: ['req.headers["x-api-key"]'] }).logger, {
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]'] }
  }, 'a caller\'s own paths are added, not substituted')
})

/** An app at the default level whose lines are collected; `/slow` answers after SLOW_REQUEST_MS. */
async function defaultLevelApp (t: Parameters<typeof build>[0]) {
  const raw: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { raw.push(String(chunk)); done() } })
  const app = await build(t, { config: { ingestToken: 'logging-token' }, logger: { level: 'info', stream } })
  return { app, lines: () => raw.map((l) => JSON.parse(l) as LogLine & { level: number, res?: { statusCode: number }, responseTime?: number }) }
}

t.test('D45 logging: at info an ordinary request writes nothing; a 5xx writes one access line at error', async (t) => {
  const { app, lines } = await defaultLevelApp(t)
  for (const url of ['/v1/towns', '/v1/prices/latest', '/v1/nothing-here', '/v1/prices?limit=0']) await app.inject(url)
  t.same(lines(), [], '200, 404 and 422 answers: no line')
  app.prices.listTowns = async () => { throw new Error('database gone') }
  app.readCache.clear()
  t.equal((await app.inject('/v1/towns')).statusCode, 500)
  const written = lines()
  t.same(written.map((l) => [l.level, l.msg]), [[50, 'request failed'], [50, 'request completed']])
  t.equal(written[1]?.res?.statusCode, 500)
  t.type(written[1]?.responseTime, 'number')
})
