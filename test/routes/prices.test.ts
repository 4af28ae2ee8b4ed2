import t from '../support/file-test.js'
import { build, testDatabase } from '../helper.js'
import { csv, HEADER, TOKEN, upload } from '../fixtures/ingest.js'
import { STORED, inD2Order, seedFixture, type ApiPrice } from './_fixtures.js'

t.before(seedFixture)

const get = async (url: string, headers: Record<string, string> = {}) => {
  const app = await build(t)
  return await app.inject({ method: 'GET', url, headers })
}

t.test('[D2] no filter: every row, valid_from desc then town (D3, El Wak < Elburgon) then id', async (t) => {
  const res = await get('/v1/prices')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  const body = res.json() as ApiPrice[]
  t.same(body, inD2Order(STORED))
  t.same(body.slice(0, 5).map((p) => p.town), ['El Wak', 'Elburgon', "Moi's Bridge", 'Mombasa', 'Nairobi'])
  t.same(body[0], { id: 9, town: 'El Wak', super_petrol: 181.35, diesel: 171.3, kerosene: 151.5, valid_from: '2026-10-15', valid_to: '2026-11-14' })
})

t.test('[D2] offset pages neither skip nor repeat rows', async (t) => {
  const seen: ApiPrice[] = []
  for (let offset = 0; ; offset += 4) {
    const page = (await get(`/v1/prices?limit=4&offset=${offset}`)).json() as ApiPrice[]
    seen.push(...page)
    if (page.length < 4) break
  }
  t.same(seen, inD2Order(STORED))
})

t.test('[D4] town filter is case-insensitive, trimmed and white-space collapsed', async (t) => {
  const expected = inD2Order(STORED.filter((p) => p.town === "Moi's Bridge"))
  t.same((await get("/v1/prices?town=MOI'S%20%20bridge%20")).json(), expected)
  t.same((await get("/v1/prices?town=moi's+bridge")).json(), expected)
  t.same((await get('/v1/prices?town=Nowhere')).json(), [])
})

t.test('[spec 4.1 r4] start_date and end_date bound one cycle', async (t) => {
  const res = await get('/v1/prices?start_date=2026-09-15&end_date=2026-10-14')
  t.same(res.json(), inD2Order(STORED.filter((p) => p.valid_from === '2026-09-15')))
  t.same((await get('/v1/prices?start_date=2026-09-16')).json(), inD2Order(STORED.filter((p) => p.valid_from === '2026-10-15')))
  t.same((await get('/v1/prices?end_date=2026-10-13')).json(), inD2Order(STORED.filter((p) => p.valid_from === '2026-08-15')))
  t.same((await get('/v1/prices?end_date=2026-11-14&town=nairobi')).json(), inD2Order(STORED.filter((p) => p.town === 'Nairobi')))
})

t.test('[D21] start_date after end_date is not an error: []', async (t) => {
  const res = await get('/v1/prices?start_date=2026-10-15&end_date=2026-09-14')
  t.equal(res.statusCode, 200)
  t.same(res.json(), [])
})

t.test('[D21] empty values mean absent; unknown parameters are ignored', async (t) => {
  const res = await get('/v1/prices?town=&start_date=&end_date=&limit=&offset=&colour=blue')
  t.equal(res.statusCode, 200)
  t.same(res.json(), inD2Order(STORED))
})

t.test('[spec 4.1] limit defaults to 100 and offset past the end gives []', async (t) => {
  t.same((await get('/v1/prices?limit=1')).json(), inD2Order(STORED).slice(0, 1))
  t.same((await get('/v1/prices?offset=15')).json(), [])
  t.same((await get('/v1/prices?limit=1000&offset=14')).json(), inD2Order(STORED).slice(14))
})

t.test('[D20] 422 lists every failing parameter in the pydantic-v1 shape', async (t) => {
  const res = await get('/v1/prices?limit=0&offset=-1&start_date=2026-02-30&end_date=15-10-2026')
  t.equal(res.statusCode, 422)
  t.equal(res.headers['cache-control'], 'no-store')
  t.same(res.json(), {
    detail: [
      { loc: ['query', 'start_date'], msg: 'invalid date format', type: 'value_error.date' },
      { loc: ['query', 'end_date'], msg: 'invalid date format', type: 'value_error.date' },
      { loc: ['query', 'limit'], msg: 'ensure this value is greater than or equal to 1', type: 'value_error.number.not_ge' },
      { loc: ['query', 'offset'], msg: 'ensure this value is greater than or equal to 0', type: 'value_error.number.not_ge' }
    ]
  })
})

t.test('[D20] limit above 1000, non-integers', async (t) => {
  t.same((await get('/v1/prices?limit=1001')).json(), {
    detail: [{ loc: ['query', 'limit'], msg: 'ensure this value is less than or equal to 1000', type: 'value_error.number.not_le' }]
  })
  t.same((await get('/v1/prices?limit=abc&offset=1.5')).json(), {
    detail: [
      { loc: ['query', 'limit'], msg: 'value is not a valid integer', type: 'type_error.integer' },
      { loc: ['query', 'offset'], msg: 'value is not a valid integer', type: 'type_error.integer' }
    ]
  })
})

t.test('[D17] 200 carries the public Cache-Control; [D18] ETag and 304', async (t) => {
  const first = await get('/v1/prices?town=nairobi')
  t.equal(first.headers['cache-control'], 'public, max-age=86400, s-maxage=604800')
  const etag = first.headers.etag as string
  t.match(etag, /^"[A-Za-z0-9_-]+"$/)
  const again = await get('/v1/prices?town=nairobi', { 'if-none-match': etag })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
  t.equal(again.headers.etag, etag)
  t.equal(again.headers['cache-control'], 'public, max-age=86400, s-maxage=604800')
  const other = await get('/v1/prices?town=nairobi', { 'if-none-match': '"something-else"' })
  t.equal(other.statusCode, 200)
})

t.test('[spec 4.2 r6, widened] a repeated page is served with zero database statements; equivalent queries share it', async (t) => {
  const database = await testDatabase()
  const app = await build(t)
  const first = await app.inject('/v1/prices?town=Nairobi&limit=2')
  t.strictSame(first.json(), inD2Order(STORED.filter((r) => r.town === 'Nairobi')).slice(0, 2))
  const before = database.statements()
  // Another case and spacing of the town, and the defaults spelled out or left empty (D21).
  for (const url of ['/v1/prices?town=Nairobi&limit=2', '/v1/prices?town=%20NAIROBI%20&limit=2&offset=0', '/v1/prices?town=nairobi&limit=2&offset=&start_date=']) {
    const res = await app.inject(url)
    t.equal(res.body, first.body, url)
    t.equal(res.headers.etag, first.headers.etag)
  }
  t.equal(database.statements(), before, 'no statement reached the driver')
  t.equal(app.readCache.otherHits, 3)
  t.equal(app.readCache.otherMisses, 1)
  t.equal(app.readCache.bytes, first.body.length + 'prices:nairobi:::2:0'.length)
})

t.test('[spec 4.2 r6, widened] an ingest clears every cached page: the next request reads the new data', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const page = async (): Promise<ApiPrice[]> => (await app.inject('/v1/prices?town=Nairobi&limit=1')).json()
  t.equal((await page())[0]?.super_petrol, inD2Order(STORED.filter((r) => r.town === 'Nairobi'))[0]?.super_petrol)
  t.equal((await upload(app, csv(HEADER, '15-10-2026,14-11-2026,Nairobi,199.99,170.00,150.00'))).statusCode, 201)
  t.equal((await page())[0]?.super_petrol, 199.99)
  await seedFixture()
})
