import t from '../support/file-test.js'
import { build } from '../helper.js'

t.test('GET / sends a person to /docs/ and a client to the contract', async (t) => {
  // Not an operation of the contract (like /docs itself).
  const app = await build(t, { contract: false })
  const res = await app.inject('/')
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, '/docs/')
  t.equal(res.headers.link, '</v1/openapi.json>; rel="service-desc"; type="application/json", </docs/>; rel="service-doc"')
  t.same(res.json(), { detail: 'See /docs/ for the documentation and /v1/openapi.json for the contract.' })
  t.equal(res.headers['ratelimit-limit'], undefined, 'never rate limited')
  t.equal((await app.inject(res.headers.location as string)).statusCode, 200, 'and the docs answer')
})
