import t from '../support/file-test.js'
import { build, insertPrices, resetData, testDatabase } from '../helper.js'
import { AUTH, TOKEN, upload } from '../fixtures/ingest.js'
import { STORED, inD2Order, seedFixture, type ApiPrice } from './_fixtures.js'

/** GET /v1/prices as CSV: the ingest format, streamed, the same rows as the JSON answer. */

const HEADER = 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)'
const PUBLIC = 'public, max-age=86400, s-maxage=604800'

/** Written by hand from the fixture (not with src/export/csv.ts), so the test checks it. */
const line = (p: ApiPrice): string => {
  const date = (d: string): string => d.split('-').reverse().join('-')
  const town = /[",]/.test(p.town) ? `"${p.town.replaceAll('"', '""')}"` : p.town
  return `${date(p.valid_from)},${date(p.valid_to)},${town},${p.super_petrol.toFixed(2)},${p.diesel.toFixed(2)},${p.kerosene.toFixed(2)}\r\n`
}
const csvOf = (rows: ApiPrice[]): string => `${HEADER}\r\n` + rows.map(line).join('')

t.beforeEach(seedFixture)

const get = async (url: string, headers: Record<string, string> = {}) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  return await app.inject({ method: 'GET', url, headers })
}

t.test('?format=csv: every row in D2 order, ingest header, DD-MM-YYYY, two decimals, an attachment', async (t) => {
  const res = await get('/v1/prices?format=csv')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(res.headers['content-disposition'], 'attachment; filename="fuel-prices.csv"')
  t.equal(res.headers['cache-control'], PUBLIC, 'D17: a 2xx of GET /v1/prices')
  t.match(res.headers.vary, /\bAccept\b/)
  t.equal(res.headers.etag, undefined, 'a streamed export has no ETag')
  t.equal(res.body, csvOf(inD2Order(STORED)))
  t.equal(res.body.split('\r\n')[1], '15-10-2026,14-11-2026,El Wak,181.35,171.30,151.50')
})

t.test('Accept: text/csv selects CSV; format wins over Accept; */* stays JSON', async (t) => {
  const csv = await get('/v1/prices?town=nairobi', { accept: 'text/csv' })
  t.equal(csv.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(csv.body, csvOf(inD2Order(STORED.filter((p) => p.town === 'Nairobi'))))
  const json = await get('/v1/prices?town=nairobi&format=json', { accept: 'text/csv' })
  t.equal(json.headers['content-type'], 'application/json; charset=utf-8')
  t.same(json.json(), inD2Order(STORED.filter((p) => p.town === 'Nairobi')))
  t.match(json.headers.vary, /\bAccept\b/, 'the JSON answer varies on Accept too, for caches')
  const any = await get('/v1/prices?town=nairobi', { accept: '*/*' })
  t.equal(any.headers['content-type'], 'application/json; charset=utf-8')
  const csvParam = await get('/v1/prices?town=nairobi&format=csv', { accept: 'application/json' })
  t.equal(csvParam.headers['content-type'], 'text/csv; charset=utf-8')
})

t.test('GET /v1/prices varies by Accept, which picks JSON or CSV; /v1/prices.csv is always CSV and varies by Origin only', async (t) => {
  const negotiated = await get('/v1/prices', { accept: 'text/csv' })
  t.equal(negotiated.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(negotiated.headers.vary, 'Origin, Accept')
  const own = await get('/v1/prices.csv', { accept: 'application/json' })
  t.equal(own.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(own.headers.vary, 'Origin')
  // The JSON page is large enough to be compressed, so it varies by Accept-Encoding too, and its 304 says the same.
  const json = await get('/v1/prices')
  t.equal(json.headers['content-type'], 'application/json; charset=utf-8')
  t.ok(json.body.length >= 1024, `${json.body.length} bytes: compressible`)
  t.equal(json.headers.vary, 'Origin, Accept, Accept-Encoding')
  const revalidated = await get('/v1/prices', { 'if-none-match': String(json.headers.etag) })
  t.equal(revalidated.statusCode, 304)
  t.equal(revalidated.headers.vary, 'Origin, Accept, Accept-Encoding')
})

t.test('[D2, D4, spec 4.1] filters, limit and offset apply to CSV as to JSON', async (t) => {
  const url = '/v1/prices?town=MOI%27S%20bridge&start_date=2026-09-15&limit=1&offset=1'
  const json = (await get(url)).json() as ApiPrice[]
  t.equal(json.length, 1)
  t.equal((await get(url + '&format=csv')).body, csvOf(json))
  t.equal((await get('/v1/prices?format=csv&limit=4&offset=3')).body, csvOf(inD2Order(STORED).slice(3, 7)))
  t.equal((await get('/v1/prices?format=csv&town=Nowhere')).body, `${HEADER}\r\n`, 'no match: the header line alone')
  t.equal((await get('/v1/prices?format=csv&start_date=2026-10-15&end_date=2026-09-14')).body, `${HEADER}\r\n`)
})

t.test('[D20] a bad format is a 422 in the pydantic wording', async (t) => {
  const res = await get('/v1/prices?format=xml&limit=0')
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    detail: [
      { loc: ['query', 'limit'], msg: 'ensure this value is greater than or equal to 1', type: 'value_error.number.not_ge' },
      { loc: ['query', 'format'], msg: "value is not a valid enumeration member; permitted: 'json', 'csv'", type: 'type_error.enum' }
    ]
  })
})

t.test('without limit, CSV is every matching row (bulk), JSON still pages by 100', async (t) => {
  await resetData()
  const towns = Array.from({ length: 45 }, (_, i) => `Town ${String(i).padStart(2, '0')}`)
  const months = ['2026-01-15', '2026-02-15', '2026-03-15', '2026-04-15', '2026-05-15']
  await insertPrices(months.flatMap((validFrom) => towns.map((town) => ({ town, superPetrol: '180.50', diesel: '170.00', kerosene: '150.00', validFrom }))))
  const json = (await get('/v1/prices')).json() as ApiPrice[]
  t.equal(json.length, 100)
  const csv = (await get('/v1/prices?format=csv')).body.split('\r\n')
  t.equal(csv.length, 1 + 225 + 1, 'header, 225 rows, and the empty string after the last CRLF')
  t.equal(csv[1], '15-05-2026,14-06-2026,Town 00,180.50,170.00,150.00')
  t.equal(csv[225], '15-01-2026,14-02-2026,Town 44,180.50,170.00,150.00')
})

t.test('[D2] the repository streams in keyset batches that equal the offset pages', async (t) => {
  const app = await build(t)
  const collect = async (filter: Parameters<typeof app.prices.streamPrices>[0], size: number): Promise<{ rows: ApiPrice[], sizes: number[] }> => {
    const rows: ApiPrice[] = []
    const sizes: number[] = []
    for await (const batch of app.prices.streamPrices(filter, size)) { rows.push(...batch); sizes.push(batch.length) }
    return { rows, sizes }
  }
  const all = await collect({ offset: 0 }, 4)
  t.same(all.rows, inD2Order(STORED))
  t.same(all.sizes, [4, 4, 4, 3])
  t.same((await collect({ offset: 2, limit: 9 }, 4)).rows, inD2Order(STORED).slice(2, 11))
  t.same((await collect({ offset: 2, limit: 9 }, 4)).sizes, [4, 4, 1])
  t.same((await collect({ offset: 0, limit: 8 }, 4)).sizes, [4, 4], 'no empty query after an exact fit of the limit')
  t.same((await collect({ offset: 0, town: 'el wak' }, 1)).rows, inD2Order(STORED.filter((p) => p.town === 'El Wak')))
  t.same((await collect({ offset: 20 }, 4)).sizes, [])
  const before = (await testDatabase()).statements()
  await collect({ offset: 0 }, 5)
  t.equal((await testDatabase()).statements() - before, 4, '15 rows in batches of 5: three full batches and one empty')
})

t.test('[spec 4.5][D30] an export uploads back unchanged: dry run inserts 0, updates 0', async (t) => {
  await insertPrices([
    // Names D30 accepts (a comma or a quote no longer can be a town's, so none needs quoting).
    { town: "St. Mary's Ol'kalou 2", superPetrol: '199.99', diesel: '189.10', kerosene: '170.05', validFrom: '2026-10-15' },
    { town: 'Νέα Σμύρνη', superPetrol: '200.00', diesel: '190.00', kerosene: '171.00', validFrom: '2026-10-15' }
  ])
  const exported = await get('/v1/prices?format=csv')
  t.match(exported.body, /\r\n15-10-2026,14-11-2026,St\. Mary's Ol'kalou 2,199\.99,189\.10,170\.05\r\n/)
  t.match(exported.body, /\r\n15-10-2026,14-11-2026,Νέα Σμύρνη,200\.00,190\.00,171\.00\r\n/)
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const dry = await upload(app, exported.body, { query: '?dry_run=true', headers: AUTH })
  t.equal(dry.statusCode, 200)
  t.match(dry.json(), { status: 'dry_run', records_processed: STORED.length + 2, inserted: 0, updated: 0, unchanged: STORED.length + 2 })
})
