import { Writable } from 'node:stream'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import { lazyChildLoggerFactory } from '../../src/logging/lazy-logger.js'

/**
 * Each request's logger is made only when it writes. What is written, with which
 * request id, and at which level (the app's, or a route's own logLevel) is what pino's own child
 * would write.
 */

interface Line { level: number, msg: string, reqId?: string, extra?: string }

async function appAt (t: Test, level: string) {
  const raw: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { raw.push(String(chunk)); done() } })
  let children = 0
  // The app's own pino logger, seen through an object that counts the children made of it.
  const counted = (logger: FastifyBaseLogger): FastifyBaseLogger => Object.create(logger, {
    child: { value: (...args: Parameters<FastifyBaseLogger['child']>) => { children++; return logger.child(...args) } }
  }) as FastifyBaseLogger
  const app = Fastify({
    logger: { level, stream },
    childLoggerFactory (logger, bindings, options, raw) { return lazyChildLoggerFactory().call(this, counted(logger), bindings, options, raw) },
    logController: new LogController({ disableRequestLogging: true })
  })
  const levels: string[] = []
  app.addHook('onRequest', async (request) => { levels.push(request.log.level) })
  app.get('/quiet', async (request) => {
    request.log.info('not at warn')
    request.log.debug({ extra: 'x' }, 'nor this')
    return 'ok'
  })
  app.get('/loud', async (request) => {
    request.log.warn({ extra: 'w' }, 'written')
    request.log.error('and this')
    request.log.child({ extra: 'grandchild' }).warn('from a child of it')
    return 'ok'
  })
  app.get('/chatty', { logLevel: 'debug' }, async (request) => {
    request.log.debug('a route at debug writes its debug lines')
    request.log.trace('but not trace')
    return 'ok'
  })
  await app.ready()
  t.teardown(() => app.close())
  return { app, lines: () => raw.map((l) => JSON.parse(l) as Line), children: () => children, levels }
}

t.test('below the level: nothing written and no child made', async (t) => {
  const { app, lines, children } = await appAt(t, 'warn')
  const before = children()
  for (let i = 0; i < 5; i++) t.equal((await app.inject('/quiet')).statusCode, 200)
  t.same(lines(), [])
  t.equal(children() - before, 0, 'no pino child for requests that log nothing')
})

t.test('at or above the level: written once, with the request id, by one child per request', async (t) => {
  const { app, lines, children } = await appAt(t, 'warn')
  const before = children()
  await app.inject('/loud')
  const written = lines()
  t.same(written.map((l) => [l.level, l.msg, l.extra]), [[40, 'written', 'w'], [50, 'and this', undefined], [40, 'from a child of it', 'grandchild']])
  t.equal(new Set(written.map((l) => l.reqId)).size, 1, 'one request id on every line')
  t.match(written[0]?.reqId, /^req-/)
  t.equal(children() - before, 1, 'the child is made once, on the first write')
})

t.test('a route\'s own logLevel applies (the child is made with it)', async (t) => {
  const { app, lines } = await appAt(t, 'warn')
  await app.inject('/chatty')
  t.same(lines().map((l) => [l.level, l.msg]), [[20, 'a route at debug writes its debug lines']])
})

t.test('level reads as the child\'s: the route level, else the app level', async (t) => {
  const { app, levels } = await appAt(t, 'warn')
  await app.inject('/quiet')
  await app.inject('/chatty')
  t.same(levels, ['warn', 'debug'])
})

t.test('with a root logger and Fastify\'s own off, a request\'s lines go to the root with the request id', async (t) => {
  const raw: string[] = []
  const root = pino({ level: 'info' }, new Writable({ write (chunk, _encoding, done) { raw.push(String(chunk)); done() } }))
  const app = Fastify({ childLoggerFactory: lazyChildLoggerFactory(root), logController: new LogController({ disableRequestLogging: true }) })
  app.get('/loud', async (request) => {
    request.log.debug('below the root\'s level')
    request.log.warn('written')
    return 'ok'
  })
  t.teardown(() => app.close())
  await app.inject('/loud')
  const lines = raw.map((l) => JSON.parse(l) as Line)
  t.same(lines.map((l) => [l.level, l.msg]), [[40, 'written']])
  t.match(lines[0]?.reqId, /^req-/)
})
