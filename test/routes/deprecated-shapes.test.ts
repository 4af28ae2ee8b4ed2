import t from '../support/file-test.js'
import { AUTH, HEADER, TOKEN, csv, multipart, rowCount, upload } from '../fixtures/ingest.js'
import { build } from '../helper.js'
import { seedFixture } from './_fixtures.js'

// D43: one success shape per operation and one media type per response. The dry run and the
// CSV export have operations of their own; the old spellings keep answering exactly as before,
// and say which operation they answer for.

t.beforeEach(seedFixture)

const JAN = '15-01-2026,14-02-2026'

t.test('[D43] POST /v1/ingest/csv/dry-run: the dry run as its own operation, nothing written', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const before = await rowCount()
  const form = multipart([{ name: 'file', filename: 'prices.csv', contentType: 'text/csv', body: csv(HEADER, `${JAN},Nairobi,180.50,170.00,160.25`) }])
  const res = await app.inject({ method: 'POST', url: '/v1/ingest/csv/dry-run', headers: { ...AUTH, ...form.headers }, payload: form.payload })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal(res.headers.deprecation, undefined)
  t.strictSame(res.json(), {
    status: 'dry_run',
    records_processed: 1,
    inserted: 1,
    updated: 0,
    unchanged: 0,
    cycles: [{
      valid_from: '2026-01-15',
      valid_to: '2026-02-14',
      previous_valid_from: null,
      new_towns: [],
      new_towns_not_listed: 0,
      missing_towns: [],
      missing_towns_not_listed: 0,
      warnings: [],
      warnings_not_listed: 0,
      changes: [],
      changes_not_listed: 0,
      cycle_warnings: []
    }]
  })
  t.equal(await rowCount(), before)
  const refused = await app.inject({ method: 'POST', url: '/v1/ingest/csv/dry-run', headers: form.headers, payload: form.payload })
  t.equal(refused.statusCode, 401)
  t.strictSame(refused.json(), { detail: 'Invalid authorization token for ingestion endpoint.' })
  const noFile = await app.inject({ method: 'POST', url: '/v1/ingest/csv/dry-run', headers: { ...AUTH, 'content-type': 'application/json' }, payload: '{}' })
  t.equal(noFile.statusCode, 422)
  t.strictSame(noFile.json(), { detail: [{ loc: ['body', 'file'], msg: 'field required', type: 'value_error.missing' }] })
})

t.test('[D43] ?dry_run=true keeps answering the dry run, with Deprecation and a successor Link', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const file = csv(HEADER, `${JAN},Nairobi,180.50,170.00,160.25`)
  const old = await upload(app, file, { query: '?dry_run=true' })
  t.equal(old.statusCode, 200)
  t.equal(old.headers.deprecation, '@1795305600')
  t.equal(old.headers.link, '</v1/ingest/csv/dry-run>; rel="successor-version"')
  const form = multipart([{ name: 'file', filename: 'prices.csv', contentType: 'text/csv', body: file }])
  const successor = await app.inject({ method: 'POST', url: '/v1/ingest/csv/dry-run', headers: { ...AUTH, ...form.headers }, payload: form.payload })
  t.equal(old.body, successor.body, 'the same answer as the successor')
  t.equal((await upload(app, file, { query: '?dry_run=false' })).statusCode, 201, 'false is a real upload')
})

t.test('[D43] GET /v1/prices.csv: the export as its own operation; Accept: text/csv on /v1/prices answers the same', async (t) => {
  const app = await build(t)
  const res = await app.inject('/v1/prices.csv?town=nairobi&limit=2')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(res.headers['content-disposition'], 'attachment; filename="fuel-prices.csv"')
  t.equal(res.body, [
    'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)',
    '15-10-2026,14-11-2026,Nairobi,181.05,171.00,151.50',
    '15-09-2026,14-10-2026,Nairobi,180.05,170.00,150.50',
    ''
  ].join('\r\n'))
  // No default limit here: every matching row (15 of the fixture, plus the header).
  t.equal((await app.inject('/v1/prices.csv')).body.split('\r\n').length - 2, 15)

  const negotiated = await app.inject({ url: '/v1/prices?town=nairobi&limit=2', headers: { accept: 'text/csv' } })
  t.equal(negotiated.body, res.body)
  t.equal(negotiated.headers['content-location'], '/v1/prices.csv?town=nairobi&limit=2')
  const byFormat = await app.inject('/v1/prices?format=csv&town=nairobi&limit=2')
  t.equal(byFormat.body, res.body)
  t.equal(byFormat.headers['content-location'], '/v1/prices.csv?format=csv&town=nairobi&limit=2')
  t.equal((await app.inject('/v1/prices')).headers['content-location'], undefined, 'JSON is the operation\'s own answer')
  t.strictSame((await app.inject('/v1/prices.csv?limit=0')).json(), {
    detail: [{ loc: ['query', 'limit'], msg: 'ensure this value is greater than or equal to 1', type: 'value_error.number.not_ge' }]
  })
})
