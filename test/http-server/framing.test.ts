import net, { type AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { TOKEN } from '../fixtures/ingest.js'
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
