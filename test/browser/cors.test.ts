import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from '../support/file-test.js'
import { MemorySlidingWindowStore } from '../../src/rate-limit/memory-store.js'
import { build, insertPrices, resetData } from '../helper.js'
import { needs } from '../services.js'
import { dumpDom } from './chromium.js'

/**
 * D22 + D24 in a real browser (Debian's Chromium, headless): a page on an allowed origin reads
 * the API's JSON and its exposed rate-limit headers; the same page on any other origin cannot.
 */
await resetData()
await insertPrices([{ town: 'Nairobi', superPetrol: '180.55', diesel: '171.40', kerosene: '150.50', validFrom: '2026-10-15' }])

// The real limit (60), on a store of this test's own.
const api = await build(t, { rateLimitMax: 60, rateLimitStore: new MemorySlidingWindowStore({ max: 60 }) })
await api.listen({ port: 0, host: '127.0.0.1' })
const apiUrl = `http://localhost:${(api.server.address() as AddressInfo).port}`

const page = (target: string): string => `<!doctype html><html><body><pre id="out">pending</pre><script>
  fetch(${JSON.stringify(target)})
    .then(async (res) => {
      const body = await res.json()
      document.getElementById('out').textContent = JSON.stringify({
        status: res.status,
        town: body[0] && body[0].town,
        superPetrol: body[0] && body[0].super_petrol,
        limit: res.headers.get('RateLimit-Limit'),
        remaining: res.headers.get('RateLimit-Remaining'),
        reset: res.headers.get('RateLimit-Reset'),
        etag: res.headers.get('ETag') !== null
      })
    })
    .catch((err) => { document.getElementById('out').textContent = 'CORS-ERROR ' + err.name })
</script></body></html>`

async function servePage (port: number, host: string): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(page(`${apiUrl}/v1/prices/latest?town=nairobi`))
  })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(port, host, resolve) })
  t.teardown(async () => { await new Promise((resolve) => server.close(resolve)) })
  return server
}

const outOf = (dom: string): string => /<pre id="out">([^<]*)<\/pre>/.exec(dom)?.[1]?.replace(/&quot;/g, '"') ?? dom

t.test('[D24][D22] from http://localhost:3000 the page reads the prices and its remaining allowance', await needs('chromium'), async (t) => {
  await servePage(3000, 'localhost')
  const out = outOf(await dumpDom('http://localhost:3000/'))
  t.same(JSON.parse(out), {
    status: 200,
    town: 'Nairobi',
    superPetrol: 180.55,
    limit: '60',
    remaining: '59',
    reset: '60',
    etag: true
  })
})

t.test('[D24] the same page on an origin not on the list gets a CORS error', await needs('chromium'), async (t) => {
  const server = await servePage(0, '127.0.0.1')
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const out = outOf(await dumpDom(`${origin}/`))
  t.equal(out, 'CORS-ERROR TypeError')
})
