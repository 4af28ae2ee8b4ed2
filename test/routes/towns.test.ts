import t from '../support/file-test.js'
import { build, resetData, testDatabase } from '../helper.js'
import { csv, HEADER, TOKEN, upload } from '../fixtures/ingest.js'
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

t.test('[spec 4.3 r2] reflects the database at request time: an ingest shows on the next request', async (t) => {
  // The table changes only through ingest, which clears the read cache (on every replica, D26).
  await seedFixture()
  const app = await build(t, { config: { ingestToken: TOKEN } })
  await app.inject('/v1/towns')
  t.equal((await upload(app, csv(HEADER, '15-10-2026,14-11-2026,athi river,180.00,170.00,150.00'))).statusCode, 201)
  t.same((await app.inject('/v1/towns')).json(), ['Athi River', 'El Wak', 'Elburgon', "Moi's Bridge", 'Mombasa', 'Nairobi'])
})

t.test('[spec 4.2 r6, widened] after the first request /v1/towns is served with zero database statements', async (t) => {
  await seedFixture()
  const database = await testDatabase()
  const app = await build(t)
  const first = await app.inject('/v1/towns')
  const before = database.statements()
  for (let i = 0; i < 3; i++) t.equal((await app.inject('/v1/towns')).body, first.body)
  t.equal(database.statements(), before, 'no statement reached the driver')
  t.equal(app.readCache.otherHits, 3)
  t.equal(app.readCache.otherMisses, 1)
})

t.test('[D18] ETag revalidation gives 304', async (t) => {
  await seedFixture()
  const app = await build(t)
  const first = await app.inject('/v1/towns')
  const again = await app.inject({ url: '/v1/towns', headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
})
