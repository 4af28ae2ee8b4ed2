import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { Worker } from 'node:worker_threads'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import type { FastifyInstance } from 'fastify'
import { build, resetData } from '../helper.js'
import { HEADER, TOKEN, csv, multipart, rowCount } from '../fixtures/ingest.js'
import { connect, head } from './_raw-http.js'

/**
 * D29: an answer sent before the body is read reaches the client: the rest of the body is
 * drained (up to MAX_UPLOAD_BYTES, while it keeps coming) instead of being cut off by a close.
 * Real sockets throughout: the failure being fixed (EPIPE in the client) only exists there.
 */

const INVALID = '{"detail":"Invalid authorization token for ingestion endpoint."}'
const FILE = csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25', '15-01-2026,14-02-2026,Mombasa,178.20,168.00,158.00')

t.beforeEach(resetData)

async function listening (t: Test, config: Parameters<typeof build>[1]): Promise<{ app: FastifyInstance, port: number }> {
  const app = await build(t, config)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as AddressInfo).port }
}

/**
 * The client runs on a thread of its own: in the server's thread a fetch would write its whole
 * body before the server could answer, and the race this test is about would never happen.
 */
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads')
;(async () => {
  const outcomes = {}
  for (let i = 0; i < workerData.times; i++) {
    const form = new FormData()
    form.append('file', new Blob([workerData.csv], { type: 'text/csv' }), 'prices.csv')
    let outcome
    try {
      const res = await fetch(workerData.url, { method: 'POST', headers: { authorization: 'Bearer wrong-token' }, body: form })
      outcome = res.status + ' ' + await res.text()
    } catch (err) {
      outcome = 'fetch failed: ' + (err.cause?.code ?? err.cause?.message ?? err.message)
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
  }
  parentPort.postMessage(outcomes)
})()
`

t.test('[D29][D13] 200 small uploads with a wrong token through fetch: 200 × 401 with the exact detail', async (t) => {
  const { port } = await listening(t, { config: { ingestToken: TOKEN } })
  const worker = new Worker(CLIENT, { eval: true, workerData: { url: `http://127.0.0.1:${port}/v1/ingest/csv`, csv: FILE, times: 200 } })
  const [outcomes] = await once(worker, 'message') as [Record<string, number>]
  t.strictSame(outcomes, { [`401 ${INVALID}`]: 200 })
  t.equal(await rowCount(), 0)
})

t.test('[D29] a client that withholds its body reads its 401 at once; the connection closes after the idle bound', async (t) => {
  const { port } = await listening(t, { config: { ingestToken: TOKEN } })
  const conn = await connect(port)
  t.teardown(() => conn.socket.destroy())
  const form = multipart([{ name: 'file', filename: 'prices.csv', contentType: 'text/csv', body: FILE }])
  conn.socket.write(head('POST /v1/ingest/csv HTTP/1.1', {
    host: 'localhost',
    authorization: 'Bearer wrong-token',
    'content-type': form.headers['content-type'],
    'content-length': form.payload.length
  })) // …and never the body
  const res = await conn.response(5000)
  t.equal(res.status, 401)
  t.equal(res.body, INVALID)
  t.equal(res.headers.connection, 'keep-alive', 'not closed under the client')
  t.equal(conn.isClosed(), false)
  await conn.closed // after DRAIN_IDLE_MS without a byte (the tap timeout guards against "never")
  t.pass('the server closed the stalled connection')
})

t.test('[D29] a body drained to its end leaves a usable connection (ingest and /metrics)', async (t) => {
  const { port } = await listening(t, { config: { ingestToken: TOKEN, metricsToken: 'metrics-token' } })
  const conn = await connect(port)
  t.teardown(() => conn.socket.destroy())
  const form = multipart([{ name: 'file', filename: 'prices.csv', contentType: 'text/csv', body: FILE }])
  conn.socket.write(head('POST /v1/ingest/csv HTTP/1.1', {
    host: 'localhost',
    authorization: 'Bearer wrong-token',
    'content-type': form.headers['content-type'],
    'content-length': form.payload.length
  }))
  const first = await conn.response()
  t.equal(first.status, 401)
  t.equal(first.body, INVALID)
  conn.socket.write(form.payload) // the body arrives after the answer, as it does on a slow link
  const body = 'a body nobody asked for'
  conn.socket.write(head('GET /metrics HTTP/1.1', { host: 'localhost', authorization: 'Bearer nope', 'content-length': body.length }))
  const second = await conn.response()
  t.equal(second.status, 401)
  t.equal(second.body, '{"detail":"Invalid authorization token for metrics endpoint."}')
  conn.socket.write(body)
  conn.socket.write(head('GET /v1/health HTTP/1.1', { host: 'localhost' }))
  const third = await conn.response()
  t.equal(third.status, 200, 'the same connection serves the next request')
  t.equal(JSON.parse(third.body).status, 'healthy')
  t.equal(conn.isClosed(), false)
  t.equal(await rowCount(), 0)
})

t.test('[D29][D48] a declared body above the lingering bound is not drained: answered with Connection: close', async (t) => {
  const { port } = await listening(t, { config: { ingestToken: TOKEN, maxUploadBytes: 1024 } })
  const conn = await connect(port)
  t.teardown(() => conn.socket.destroy())
  conn.socket.write(head('POST /v1/ingest/csv HTTP/1.1', {
    host: 'localhost',
    authorization: 'Bearer wrong-token',
    'content-type': 'multipart/form-data; boundary=x',
    'content-length': 5 * 1024 + 1
  }))
  const res = await conn.response()
  t.equal(res.status, 401)
  t.equal(res.body, INVALID)
  t.equal(res.headers.connection, 'close')
  await conn.closed
  t.pass('closed at once')
})

/** One upload through fetch and FormData from a thread of its own; its status, or how it failed. */
const BIG_CLIENT = `
const { parentPort, workerData } = require('node:worker_threads')
;(async () => {
  const form = new FormData()
  form.append('file', new Blob([Buffer.alloc(workerData.bytes, 'a')], { type: workerData.type }), 'prices.csv')
  try {
    const res = await fetch(workerData.url, { method: 'POST', headers: { authorization: 'Bearer ' + workerData.token }, body: form })
    parentPort.postMessage(res.status + ' ' + await res.text())
  } catch (err) {
    parentPort.postMessage('fetch failed: ' + (err.cause?.code ?? err.cause?.message ?? err.message))
  }
})()
`

t.test('[D48] lingering close: fetch reads the 401, 413 and 415 of 12 MiB and 40 MiB uploads', async (t) => {
  const { port } = await listening(t, { config: { ingestToken: TOKEN } })
  // A type refused while the file is still arriving: the size must not be refused first.
  const roomy = await listening(t, { config: { ingestToken: TOKEN, maxUploadBytes: 64 * 1024 * 1024 } })
  const cases: Array<[number, string, string, string]> = [
    [port, 'wrong-token', 'text/csv', `401 ${INVALID}`],
    [port, TOKEN, 'text/csv', '413 {"detail":"Uploaded file exceeds the 10 MiB limit."}'],
    [roomy.port, TOKEN, 'image/png', '415 {"detail":"Uploaded file must be a CSV file."}']
  ]
  for (const mib of [12, 40]) {
    for (const [to, token, type, expected] of cases) {
      const worker = new Worker(BIG_CLIENT, { eval: true, workerData: { url: `http://127.0.0.1:${to}/v1/ingest/csv`, token, type, bytes: mib * 1024 * 1024 } })
      const [outcome] = await once(worker, 'message') as [string]
      t.equal(outcome, expected, `${mib} MiB, ${type}, token ${token === TOKEN ? 'right' : 'wrong'}`)
    }
  }
  t.equal(await rowCount(), 0)
})

t.test('[D48] a client sending far past the bound is still cut off', async (t) => {
  const { port } = await listening(t, { config: { ingestToken: TOKEN } })
  const worker = new Worker(BIG_CLIENT, { eval: true, workerData: { url: `http://127.0.0.1:${port}/v1/ingest/csv`, token: 'wrong-token', type: 'text/csv', bytes: 60 * 1024 * 1024 } })
  const [outcome] = await once(worker, 'message') as [string]
  t.match(outcome, /^(401 \{"detail":"Invalid authorization token for ingestion endpoint\."\}|fetch failed: .+)$/, `60 MiB (bound 50 MiB): ${outcome}`)
})

t.test('[D29] a chunked body that runs past MAX_UPLOAD_BYTES after the answer is cut off there', async (t) => {
  const { port } = await listening(t, { config: { ingestToken: TOKEN, maxUploadBytes: 1024 } })
  const conn = await connect(port)
  t.teardown(() => conn.socket.destroy())
  conn.socket.write(head('POST /v1/ingest/csv HTTP/1.1', {
    host: 'localhost',
    authorization: 'Bearer wrong-token',
    'content-type': 'multipart/form-data; boundary=x',
    'transfer-encoding': 'chunked'
  }))
  const res = await conn.response()
  t.equal(res.status, 401)
  t.equal(res.body, INVALID)
  // 300-byte chunks every 20 ms: never idle, far within the lingering time, so only the byte
  // bound (D48: 5 × 1024) can end it, after the eighteenth chunk (5400 > 5120).
  let sent = 0
  while (!conn.isClosed() && sent < 200) {
    conn.socket.write(`12c\r\n${'x'.repeat(300)}\r\n`)
    sent++
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.ok(conn.isClosed(), `closed after ${sent} chunks`)
  t.ok(sent >= 18, 'not before the bound was passed')
})
