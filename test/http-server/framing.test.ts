import net, { type AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import { HEADER, TOKEN, csv, multipart, rowCount } from '../fixtures/ingest.js'
import { build } from '../helper.js'

/**
 * D48: requests node:http would answer itself with an empty body (no Host, an unknown Expect)
 * get the envelope and the usual headers; `Expect: 100-continue` is invited only with the right
 * token. Over raw sockets: the interim 100 response exists only on the wire.
 */
async function port (t: Test): Promise<number> {
  // Protocol-level refusals, like node:http's 408 and 431: not operations' answers in the contract.
  const app = await build(t, { config: { ingestToken: TOKEN }, contract: false })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

/** Everything the server sends within `ms` after `text`. */
async function exchange (to: number, text: string, ms = 500): Promise<string> {
  return await new Promise((resolve) => {
    const socket = net.connect(to, '127.0.0.1', () => socket.write(text))
    let out = ''
    socket.on('data', (d: Buffer) => { out += d.toString('latin1') })
    socket.on('error', () => {})
    setTimeout(() => { socket.destroy(); resolve(out) }, ms)
  })
}

const bodyOf = (raw: string): string => raw.slice(raw.indexOf('\r\n\r\n') + 4)

const FILE = csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25')

t.test('[D48] no Host header: 400 in the envelope', async (t) => {
  const raw = await exchange(await port(t), 'GET /v1/health HTTP/1.1\r\n\r\n')
  t.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/)
  t.match(raw, /\r\ncache-control: no-store\r\n/i)
  t.equal(bodyOf(raw), '{"detail":"An HTTP/1.1 request needs a Host header"}')
  // HTTP/1.0 has no Host requirement.
  t.match(await exchange(await port(t), 'GET /v1/health HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 200 OK\r\n/)
})

t.test('[D48] an Expect other than 100-continue: 417 in the envelope', async (t) => {
  const raw = await exchange(await port(t), 'GET /v1/towns HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n')
  t.match(raw, /^HTTP\/1\.1 417 Expectation Failed\r\n/)
  t.equal(bodyOf(raw), '{"detail":"Expectation Failed: only 100-continue is supported"}')
})

t.test('[D48] Expect: 100-continue is invited only with the right token', async (t) => {
  const to = await port(t)
  const request = (token: string): string => 'POST /v1/ingest/csv HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n' +
    `Authorization: Bearer ${token}\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: 100\r\n\r\n`
  const wrong = await exchange(to, request('wrong'))
  t.match(wrong, /^HTTP\/1\.1 401 Unauthorized\r\n/, 'a wrong token: the 401, with no 100 Continue before it')
  t.equal(bodyOf(wrong), '{"detail":"Invalid authorization token for ingestion endpoint."}')
  t.equal(await exchange(to, request(TOKEN)), 'HTTP/1.1 100 Continue\r\n\r\n', 'the right token: invited to send the body')
})

t.test('[D66] two Host headers: 400 in the envelope, whatever their case; nothing is written', async (t) => {
  const to = await port(t)
  const before = await rowCount()
  for (const [first, second] of [['Host', 'Host'], ['host', 'HOST'], ['Host', 'host']]) {
    const raw = await exchange(to, `GET /v1/health HTTP/1.1\r\n${first}: fuel.example\r\n${second}: evil.example\r\n\r\n`)
    t.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/, `${first} + ${second}`)
    t.match(raw, /\r\ncache-control: no-store\r\n/i)
    t.equal(bodyOf(raw), '{"detail":"A request may carry only one Host header"}')
  }
  const form = multipart([{ name: 'file', filename: 'prices.csv', contentType: 'text/csv', body: FILE }])
  const upload = await exchange(to, `POST /v1/ingest/csv HTTP/1.1\r\nHost: fuel.example\r\nHost: fuel.example\r\nAuthorization: Bearer ${TOKEN}\r\n` +
    `Content-Type: ${form.headers['content-type']}\r\nContent-Length: ${form.payload.length}\r\n\r\n${form.payload.toString('latin1')}`)
  t.match(upload, /^HTTP\/1\.1 400 Bad Request\r\n/, 'even the same host twice, even with the right token')
  t.equal(bodyOf(upload), '{"detail":"A request may carry only one Host header"}')
  t.equal(await rowCount(), before, 'nothing written')
  t.match(await exchange(to, 'GET /v1/health HTTP/1.1\r\nHost: fuel.example\r\n\r\n'), /^HTTP\/1\.1 200 OK\r\n/, 'one Host: served')
})

t.test('[D66] an upload with Content-Encoding: 415 naming the coding, before the body is parsed; nothing is written', async (t) => {
  // Documented answers of the two operations: checked against the contract.
  const app = await build(t, { config: { ingestToken: TOKEN } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const to = (app.server.address() as AddressInfo).port
  const before = await rowCount()
  const form = multipart([{ name: 'file', filename: 'prices.csv', contentType: 'text/csv', body: FILE }])
  const gzipped = gzipSync(form.payload)
  const post = async (path: string, token: string, coding: string, body: Buffer): Promise<string> =>
    await exchange(to, `POST ${path} HTTP/1.1\r\nHost: fuel.example\r\nAuthorization: Bearer ${token}\r\nContent-Encoding: ${coding}\r\n` +
    `Content-Type: ${form.headers['content-type']}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString('latin1')}`, 1500)
  for (const path of ['/v1/ingest/csv', '/v1/ingest/csv/dry-run']) {
    const raw = await post(path, TOKEN, 'gzip', gzipped)
    t.match(raw, /^HTTP\/1\.1 415 Unsupported Media Type\r\n/, path)
    t.match(raw, /\r\naccept-encoding: identity\r\n/i, 'RFC 9110 12.5.3: the codings accepted')
    t.match(raw, /\r\ncache-control: no-store\r\n/i)
    t.equal(bodyOf(raw), '{"detail":"Content-Encoding gzip is not supported: upload the file uncompressed."}')
  }
  t.equal(bodyOf(await post('/v1/ingest/csv', TOKEN, 'br, gzip', gzipped)), '{"detail":"Content-Encoding br, gzip is not supported: upload the file uncompressed."}', 'every coding named')
  t.equal(bodyOf(await post('/v1/ingest/csv', 'wrong', 'gzip', gzipped)), '{"detail":"Invalid authorization token for ingestion endpoint."}', 'the token first (D13)')
  t.equal(await rowCount(), before, 'nothing written')
  const identity = await post('/v1/ingest/csv/dry-run', TOKEN, 'identity', form.payload)
  t.match(identity, /^HTTP\/1\.1 200 OK\r\n/, '`identity` is no coding at all')
})
