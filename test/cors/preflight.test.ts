import type { AddressInfo } from 'node:net'
import t from '../support/file-test.js'
import { build } from '../helper.js'

const ALLOWED_ORIGIN = 'https://fuelkenya.com'

/** The service on a real socket; its base URL. */
async function listening (t: Parameters<typeof build>[0]): Promise<string> {
  const app = await build(t, { config: { ingestToken: 'cors-token' } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

t.test('[D24] a preflight for DELETE /v1/cycles/{valid_from} from an allowed origin allows every method of the contract', async (t) => {
  const base = await listening(t)
  const res = await fetch(`${base}/v1/cycles/2026-10-15`, {
    method: 'OPTIONS',
    headers: { origin: ALLOWED_ORIGIN, 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'authorization' }
  })
  t.equal(res.status, 204)
  t.equal(res.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN)
  t.equal(res.headers.get('access-control-allow-methods'), 'GET, DELETE, POST, OPTIONS')
  t.equal(res.headers.get('access-control-allow-headers'), 'Authorization, Content-Type')
  t.equal(res.headers.get('ratelimit-limit'), null, 'a preflight is not counted')
  t.equal(await res.text(), '')
})

t.test('[D24] a preflight from another origin gets no Access-Control-Allow-Origin, so the browser refuses', async (t) => {
  const base = await listening(t)
  const res = await fetch(`${base}/v1/cycles/2026-10-15`, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'DELETE' }
  })
  t.equal(res.status, 204)
  t.equal(res.headers.get('access-control-allow-origin'), null)
})
