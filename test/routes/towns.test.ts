import t from 'tap'
import { build, insertPrices, resetData } from '../helper.js'
import { seedFixture } from './_fixtures.js'

t.test('[spec 4.3] empty database: []', async (t) => {
  await resetData()
  const app = await build(t)
  const res = await app.inject('/v1/towns')
  t.equal(res.statusCode, 200)
  t.same(res.json(), [])
})

t.test('[D3] distinct towns, lower(town) byte-wise: El Wak before Elburgon', async (t) => {
  await seedFixture()
  const app = await build(t)
  const res = await app.inject('/v1/towns')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'public, max-age=86400, s-maxage=604800')
  t.same(res.json(), ['El Wak', 'Elburgon', "Moi's Bridge", 'Mombasa', 'Nairobi'])
})

t.test('[spec 4.3 r2] reflects the database at request time', async (t) => {
  await seedFixture()
  const app = await build(t)
  await app.inject('/v1/towns')
  await insertPrices([{ town: 'Athi River', superPetrol: '180.00', diesel: '170.00', kerosene: '150.00', validFrom: '2026-10-15' }])
  t.same((await app.inject('/v1/towns')).json(), ['Athi River', 'El Wak', 'Elburgon', "Moi's Bridge", 'Mombasa', 'Nairobi'])
})

t.test('[D18] ETag revalidation gives 304', async (t) => {
  await seedFixture()
  const app = await build(t)
  const first = await app.inject('/v1/towns')
  const again = await app.inject({ url: '/v1/towns', headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
})
