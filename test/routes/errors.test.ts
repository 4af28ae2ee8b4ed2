import t from '../support/file-test.js'
import { build } from '../helper.js'

t.test('[D19] unknown path: 404 in the envelope, no-store', async (t) => {
  const app = await build(t)
  const res = await app.inject('/v1/nothing-here')
  t.equal(res.statusCode, 404)
  t.same(res.json(), { detail: 'Not Found' })
  t.equal(res.headers['cache-control'], 'no-store')
})

t.test('[D19] known path, wrong method: 405 with Allow', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'DELETE', url: '/v1/prices?limit=3' })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, HEAD')
  t.same(res.json(), { detail: 'Method Not Allowed' })
})

t.test('[D19] an unexpected failure is 500 Internal Server Error, nothing leaked', async (t) => {
  const app = await build(t)
  app.prices.listTowns = async () => { throw new Error('relation "secret_table" does not exist at /srv/app.js:1') }
  const res = await app.inject('/v1/towns')
  t.equal(res.statusCode, 500)
  t.same(res.json(), { detail: 'Internal Server Error' })
  t.equal(res.headers['cache-control'], 'no-store')
  t.notMatch(res.body, /secret_table|app\.js/)
})

t.test('[D27] read endpoints answer 500 in the envelope while the database fails', async (t) => {
  const app = await build(t)
  app.prices.listPrices = async () => { throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }) }
  const res = await app.inject('/v1/prices')
  t.equal(res.statusCode, 500)
  t.same(res.json(), { detail: 'Internal Server Error' })
})

t.test('[spec 8] unknown paths count against the rate limit too', async (t) => {
  const app = await build(t, { rateLimitMax: 2 })
  const statuses: number[] = []
  for (let i = 0; i < 3; i++) statuses.push((await app.inject('/v1/nope')).statusCode)
  t.same(statuses, [404, 404, 429])
  const limited = await app.inject('/v1/towns')
  t.equal(limited.statusCode, 429)
  t.same(limited.json(), { detail: 'Rate limit exceeded. Try again later.' })
})
