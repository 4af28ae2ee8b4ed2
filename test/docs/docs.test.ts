import { readFileSync } from 'node:fs'
import t from '../support/file-test.js'
import { parse } from 'yaml'
import { build } from '../helper.js'

/** The contract served: /v1/openapi.yaml, /v1/openapi.json and Swagger UI at /docs. */

const yamlText = readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')
const document = parse(yamlText) as { servers: unknown[] }

t.test('GET /v1/openapi.yaml is the file itself; GET /v1/openapi.json the same document', async (t) => {
  const app = await build(t)
  const yaml = await app.inject('/v1/openapi.yaml')
  t.equal(yaml.statusCode, 200)
  t.equal(yaml.headers['content-type'], 'application/yaml; charset=utf-8')
  t.equal(yaml.headers['cache-control'], 'no-store')
  t.equal(yaml.body, yamlText)
  const json = await app.inject('/v1/openapi.json')
  t.equal(json.statusCode, 200)
  t.equal(json.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(json.headers['cache-control'], 'no-store')
  t.same(json.json(), document)
})

t.test('/docs is Swagger UI from bundled assets only (no CDN), under a CSP', async (t) => {
  const app = await build(t)
  const page = await app.inject('/docs')
  t.equal(page.statusCode, 200)
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8')
  t.equal(page.headers['cache-control'], 'no-store')
  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string)
  t.same(assets.filter((a) => !a.startsWith('/docs/static/')), [], 'every script, style and icon is served here')
  t.ok(assets.includes('/docs/static/swagger-ui-bundle.js'))
  for (const asset of assets) t.equal((await app.inject(asset)).statusCode, 200, asset)
  const csp = page.headers['content-security-policy'] as string
  t.match(csp, /(^|; )script-src 'self'(;|$)/)
  t.match(csp, /(^|; )connect-src 'self' https:\/\/api\.fuelkenya\.com http:\/\/localhost:8000(;|$)/)
  t.notMatch(csp, /upgrade-insecure-requests/, 'the page must work over plain HTTP on a private network')
})

t.test('the UI\'s copy of the document adds this server first, for "Try it out"', async (t) => {
  const app = await build(t)
  const res = await app.inject('/docs/json')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { ...document, servers: [{ url: '/', description: 'This server' }, ...document.servers] })
})

t.test('[D22] docs and the document are never rate limited; the API still is', async (t) => {
  const app = await build(t, { rateLimitMax: 2 })
  const urls = ['/docs', '/docs/', '/docs/json', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js', '/v1/openapi.json', '/v1/openapi.yaml']
  for (const url of urls) {
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({ url, headers: { 'x-forwarded-for': '203.0.113.9' } })
      t.equal(res.statusCode, 200, `${url} #${i + 1}`)
      t.equal(res.headers['ratelimit-limit'], undefined, `${url} #${i + 1} is not counted`)
    }
  }
  const limited = []
  for (let i = 0; i < 3; i++) limited.push((await app.inject({ url: '/v1/towns', headers: { 'x-forwarded-for': '203.0.113.9' } })).statusCode)
  t.same(limited, [200, 200, 429], 'the same client is limited on an API route')
})

t.test('nothing but the UI assets is served under /docs', async (t) => {
  const app = await build(t)
  for (const url of ['/docs/package.json', '/docs/openapi.yaml', '/docs/static/../../package.json', '/docs/static/%2e%2e/%2e%2e/package.json']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 404, url)
  }
})
