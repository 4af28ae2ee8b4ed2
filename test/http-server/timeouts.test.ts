import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import type { FastifyInstance } from 'fastify'
import { ConfigError, loadConfig } from '../../src/config.js'
import { build, resetData } from '../helper.js'
import { TOKEN, multipart, rowCount } from '../fixtures/ingest.js'
import { connect, head, type RawConnection } from './_raw-http.js'

/**
 * D32: slow and hostile connections are bounded. Timeouts are shortened per test, below what the
 * environment may set, so no test waits long (the defaults are checked as configuration);
 * assertions are about what happens, with generous bounds only to turn "never" into a failure
 * rather than a hang.
 */

const TIMEOUT_408 = '{"detail":"Request Timeout"}'
const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

async function listening (t: Test, config: Parameters<typeof build>[1]): Promise<{ app: FastifyInstance, port: number }> {
  const app = await build(t, config)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as AddressInfo).port }
}

/** Resolves true when the connection is closed within `ms`, false otherwise. */
async function closedWithin (conn: RawConnection, ms: number): Promise<boolean> {
  return await Promise.race([conn.closed.then(() => true), sleep(ms).then(() => false)])
}

t.test('[D32] defaults and their variables; headers may not outlast the whole request', async (t) => {
  const defaults = loadConfig({})
  t.strictSame(
    [defaults.headersTimeoutMs, defaults.requestTimeoutMs, defaults.bodyIdleTimeoutMs, defaults.keepAliveTimeoutMs],
    [10_000, 120_000, 10_000, 72_000])
  const set = loadConfig({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '30000', BODY_IDLE_TIMEOUT_MS: '3000', KEEP_ALIVE_TIMEOUT_MS: '65000' })
  t.strictSame([set.headersTimeoutMs, set.requestTimeoutMs, set.bodyIdleTimeoutMs, set.keepAliveTimeoutMs], [5000, 30_000, 3000, 65_000])
  t.throws(() => loadConfig({ HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '10000' }),
    new ConfigError('Invalid environment variable HEADERS_TIMEOUT_MS=20000: must not exceed REQUEST_TIMEOUT_MS (10000)'))
  t.throws(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: '5' }), ConfigError)

  const app = await build(t)
  t.equal(app.server.headersTimeout, 10_000)
  t.equal(app.server.requestTimeout, 120_000)
  t.equal(app.server.keepAliveTimeout, 72_000)
})

t.test('[D32] slowloris: 60 connections sending a header byte a second are closed with a 408; others are served meanwhile', async (t) => {
  const { port } = await listening(t, { config: { headersTimeoutMs: 2000, requestTimeoutMs: 5000 } })
  const slow = await Promise.all(Array.from({ length: 60 }, async () => await connect(port)))
  t.teardown(() => { for (const conn of slow) conn.socket.destroy() })
  const dribble = 'X-Slow: ' + 'a'.repeat(100)
  let step = 0
  for (const conn of slow) conn.socket.write('GET /v1/health HTTP/1.1\r\nHost: localhost\r\n')
  const timer = setInterval(() => {
    const byte = dribble[step++ % dribble.length] as string
    for (const conn of slow) if (!conn.isClosed()) conn.socket.write(byte)
  }, 1000)
  t.teardown(() => clearInterval(timer))

  // Normal clients, while every slow connection is still open.
  const statuses: number[] = []
  for (let i = 0; i < 10; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/v1/health`, { signal: AbortSignal.timeout(5000) })
    statuses.push(res.status)
    t.equal(JSON.parse(await res.text()).status, 'healthy')
    await sleep(100)
  }
  t.strictSame(statuses, Array(10).fill(200))
  t.equal(slow.filter((c) => c.isClosed()).length, 0, 'the slow ones were still open while others were served')

  const answers = await Promise.all(slow.map(async (conn) => await conn.response(20_000).catch((err: Error) => err.message)))
  t.strictSame(answers.map((a) => typeof a === 'string' ? a : `${a.status} ${a.body}`), Array(60).fill(`408 ${TIMEOUT_408}`))
  const closed = await Promise.all(slow.map(async (conn) => await closedWithin(conn, 10_000)))
  t.equal(closed.filter(Boolean).length, 60, 'every slow connection was closed')
  const after = await fetch(`http://127.0.0.1:${port}/v1/health`)
  t.equal(after.status, 200, 'and the service is still serving')
})

t.test('[D32] a body that stalls is cut off after the body idle timeout; nothing written', async (t) => {
  await resetData()
  const { port } = await listening(t, { config: { ingestToken: TOKEN, bodyIdleTimeoutMs: 300, requestTimeoutMs: 60_000 } })
  const conn = await connect(port)
  t.teardown(() => conn.socket.destroy())
  const form = multipart([{ name: 'file', filename: 'prices.csv', contentType: 'text/csv', body: 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)\n' }])
  conn.socket.write(head('POST /v1/ingest/csv HTTP/1.1', {
    host: 'localhost',
    authorization: `Bearer ${TOKEN}`,
    'content-type': form.headers['content-type'],
    'content-length': form.payload.length
  }))
  conn.socket.write(form.payload.subarray(0, 40)) // …and then silence
  t.equal(await closedWithin(conn, 8000), true, 'closed long before the 60 s request timeout')
  t.equal(await rowCount(), 0)
})

t.test('[D32] a body that keeps trickling is ended by the request timeout with a 408', async (t) => {
  const { port } = await listening(t, { config: { ingestToken: TOKEN, headersTimeoutMs: 500, requestTimeoutMs: 1000, bodyIdleTimeoutMs: 1000 } })
  const conn = await connect(port)
  t.teardown(() => conn.socket.destroy())
  conn.socket.write(head('POST /v1/ingest/csv HTTP/1.1', {
    host: 'localhost',
    authorization: `Bearer ${TOKEN}`,
    'content-type': 'multipart/form-data; boundary=x',
    'content-length': 10_000
  }))
  const timer = setInterval(() => { if (!conn.isClosed()) conn.socket.write('x') }, 100) // never idle for 1 s
  t.teardown(() => clearInterval(timer))
  const res = await conn.response(15_000)
  t.equal(res.status, 408)
  t.equal(res.body, TIMEOUT_408)
  t.equal(res.headers.connection, 'close')
  t.equal(await closedWithin(conn, 10_000), true)
})

t.test('[D32] an idle keep-alive connection is closed after the keep-alive timeout', async (t) => {
  const { port } = await listening(t, { config: { keepAliveTimeoutMs: 1000 } })
  const conn = await connect(port)
  t.teardown(() => conn.socket.destroy())
  conn.socket.write(head('GET /v1/health HTTP/1.1', { host: 'localhost' }))
  const res = await conn.response()
  t.equal(res.status, 200)
  t.equal(res.headers['keep-alive'], 'timeout=1')
  t.equal(await closedWithin(conn, 8000), true)
})

t.test('[D32] once the body is in, the body idle timeout no longer applies: a slow answer still arrives', async (t) => {
  await resetData()
  const app = await build(t, { config: { ingestToken: TOKEN, bodyIdleTimeoutMs: 300 } })
  // The answer is held back 900 ms, three idle timeouts, after the whole body was read and the rows written.
  app.addHook('onSend', async (_request, _reply, payload) => { await sleep(900); return payload })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const conn = await connect((app.server.address() as AddressInfo).port)
  t.teardown(() => conn.socket.destroy())
  const form = multipart([{ name: 'file', filename: 'prices.csv', contentType: 'text/csv', body: 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)\n15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25\n' }])
  conn.socket.write(head('POST /v1/ingest/csv HTTP/1.1', {
    host: 'localhost',
    authorization: `Bearer ${TOKEN}`,
    'content-type': form.headers['content-type'],
    'content-length': form.payload.length
  }))
  conn.socket.write(form.payload)
  const res = await conn.response(10_000)
  t.equal(res.status, 201)
  t.equal(await rowCount(), 1)
})
