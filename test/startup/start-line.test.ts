import { Writable } from 'node:stream'
import Fastify from 'fastify'
import t from '../support/file-test.js'
import { startLine } from '../../src/start-line.js'

/** D50: the listening line at every LOG_LEVEL, once, at level info, in the log's own format. */

for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']) {
  t.test(`LOG_LEVEL=${level}: one "Server listening at" line`, async (t) => {
    const records: Array<Record<string, unknown>> = []
    const stream = new Writable({ write (chunk: Buffer, _enc, done) { records.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done() } })
    const app = Fastify({ logger: { level, stream } })
    t.teardown(async () => { await app.close() })
    const listening = startLine()
    await app.listen({ port: 0, host: '127.0.0.1', listenTextResolver: listening.listenTextResolver })
    listening.announce(app.log)
    const port = (app.server.address() as { port: number }).port
    const lines = records.filter((r) => String(r.msg).startsWith('Server listening'))
    t.strictSame(lines.map((r) => [r.level, r.msg]), [[30, `Server listening at http://127.0.0.1:${port}`]])
    app.log.warn('after start')
    t.equal(records.some((r) => r.msg === 'after start'), level !== 'error' && level !== 'fatal' && level !== 'silent', 'the level still applies to every other line')
  })
}
