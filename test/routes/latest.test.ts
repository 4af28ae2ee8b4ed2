import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import t from '../support/file-test.js'
import { build, insertPrices, resetData, testDatabase } from '../helper.js'
import { STORED, seedFixture, type ApiPrice } from './_fixtures.js'

// D1 + D3: the highest valid_from in the table, towns ordered by lower(town) byte-wise.
const LATEST: ApiPrice[] = ['El Wak', 'Elburgon', "Moi's Bridge", 'Mombasa', 'Nairobi']
  .map((town) => STORED.find((p) => p.town === town && p.valid_from === '2026-10-15') as ApiPrice)

t.test('[spec 4.2 r5] an empty database gives 200 []', async (t) => {
  await resetData()
  const app = await build(t)
  const res = await app.inject('/v1/prices/latest')
  t.equal(res.statusCode, 200)
  t.same(res.json(), [])
})

t.test('latest cycle', async (t) => {
  await seedFixture()

  t.test('[D1][D3] all towns of the highest valid_from, ordered El Wak before Elburgon', async (t) => {
    const app = await build(t)
    const res = await app.inject('/v1/prices/latest')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(res.headers['cache-control'], 'public, max-age=86400, s-maxage=604800')
    t.same(res.json(), LATEST)
    // Byte for byte, so the fields keep the contract's order (id, town, the fuels, the dates).
    t.equal(res.body, JSON.stringify(LATEST))
  })

  t.test('[spec 4.2 r2][D4] a town gives exactly one record, matched case-insensitively', async (t) => {
    const app = await build(t)
    t.same((await app.inject("/v1/prices/latest?town=%20MOI'S%20%20bridge")).json(), [LATEST[2]])
    t.same((await app.inject('/v1/prices/latest?town=el%20wak')).json(), [LATEST[0]])
  })

  t.test('[spec 4.2 r4] an unknown town is 200 [], not an error', async (t) => {
    const app = await build(t)
    const res = await app.inject('/v1/prices/latest?town=Atlantis')
    t.equal(res.statusCode, 200)
    t.same(res.json(), [])
  })

  t.test('[D21] an empty town means all towns', async (t) => {
    const app = await build(t)
    t.same((await app.inject('/v1/prices/latest?town=')).json(), LATEST)
  })

  t.test('[spec 4.2 r6] after the first request, latest is served with zero database statements', async (t) => {
    const database = await testDatabase()
    const app = await build(t)
    await app.inject('/v1/prices/latest')
    const before = database.statements()
    for (const url of ['/v1/prices/latest', '/v1/prices/latest?town=nairobi', '/v1/prices/latest?town=nowhere', '/v1/prices/latest']) {
      const res = await app.inject(url)
      t.equal(res.statusCode, 200)
    }
    t.equal(database.statements(), before, 'no statement reached the driver')
    t.equal(app.readCache.latestHits, 4)
    t.equal(app.readCache.latestMisses, 1)
  })

  t.test('[spec 4.2 r6] clearing the cache makes the next request read the database again', async (t) => {
    const database = await testDatabase()
    const app = await build(t)
    await app.inject('/v1/prices/latest')
    await insertPrices([{ town: 'Kapsabet', superPetrol: '199.99', diesel: '188.00', kerosene: '170.10', validFrom: '2026-11-15' }])
    t.same((await app.inject('/v1/prices/latest')).json(), LATEST, 'still the cached cycle')
    app.readCache.clear()
    const before = database.statements()
    t.same((await app.inject('/v1/prices/latest')).json(), [
      { id: 16, town: 'Kapsabet', super_petrol: 199.99, diesel: 188, kerosene: 170.1, valid_from: '2026-11-15', valid_to: '2026-12-14' }
    ])
    t.equal(database.statements() - before, 1, 'one statement refills it')
    await seedFixture()
  })

  t.test('[D18] ETag and 304 from the cache; gzip made with the cycle, brotli beside it off the event loop', async (t) => {
    const app = await build(t)
    const plain = await app.inject('/v1/prices/latest')
    const etag = plain.headers.etag as string
    t.match(etag, /^"[A-Za-z0-9_-]{27}"$/)
    const notModified = await app.inject({ url: '/v1/prices/latest', headers: { 'if-none-match': etag } })
    t.equal(notModified.statusCode, 304)
    t.equal(notModified.body, '')
    t.equal(notModified.headers['cache-control'], 'public, max-age=86400, s-maxage=604800')

    // The whole cycle of five towns is below the 1 KiB threshold; a realistic one is not.
    const towns = Array.from({ length: 40 }, (_, i) => `Town ${String(i).padStart(2, '0')}`)
    await insertPrices(towns.map((town) => ({ town, superPetrol: '190.00', diesel: '180.00', kerosene: '160.00', validFrom: '2026-12-15' })))
    app.readCache.clear()
    const identity = await app.inject('/v1/prices/latest')
    t.equal(identity.headers.vary, 'Origin, Accept-Encoding')
    t.equal(identity.headers['content-encoding'], undefined)
    await (await app.readCache.latest(undefined)).brotli() // started by the fill, in the thread pool
    const br = await app.inject({ url: '/v1/prices/latest', headers: { 'accept-encoding': 'gzip, br' } })
    t.equal(br.headers['content-encoding'], 'br')
    t.equal(brotliDecompressSync(br.rawPayload).toString(), identity.body)
    t.equal(br.headers.etag, (identity.headers.etag as string).replace(/"$/, '-br"'))
    const gz = await app.inject({ url: '/v1/prices/latest', headers: { 'accept-encoding': 'gzip' } })
    t.equal(gz.headers['content-encoding'], 'gzip')
    t.equal(gunzipSync(gz.rawPayload).toString(), identity.body)
    const revalidated = await app.inject({ url: '/v1/prices/latest', headers: { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag as string } })
    t.equal(revalidated.statusCode, 304)
    // A CDN must key on both the origin (CORS) and the encoding.
    const cors = await app.inject({ url: '/v1/prices/latest', headers: { 'accept-encoding': 'gzip', origin: 'https://fuelkenya.com' } })
    t.equal(cors.headers.vary, 'Origin, Accept-Encoding')
    t.equal(cors.headers['access-control-allow-origin'], 'https://fuelkenya.com')
    await seedFixture()
  })
})
