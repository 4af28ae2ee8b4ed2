import t from '../support/file-test.js'
import { HEADER, csv, upload } from '../fixtures/ingest.js'
import { build, resetData } from '../helper.js'

/** D48: one town is one town, whatever its case or Unicode form, in the table and in the cache. */
const JAN = '15-01-2026,14-02-2026'
const FEB = '15-02-2026,14-03-2026'

t.test('[D48] a precomposed and a decomposed spelling are one town', async (t) => {
  const app = await build(t)
  await resetData()
  const res = await upload(app, csv(HEADER, `${JAN},Ny\u00e9ri,180.00,170.00,160.00`, `${JAN},Nye\u0301ri,181.00,171.00,161.00`))
  t.equal(res.statusCode, 400)
  t.same(res.json(), { detail: 'Duplicate row for Ny\u00e9ri from 2026-01-15 on lines 2 and 3', line: 3 })
  t.equal((await upload(app, csv(HEADER, `${JAN},Ny\u00e9ri,180.00,170.00,160.00`, `${FEB},Nye\u0301ri,181.00,171.00,161.00`))).statusCode, 201)
  t.same((await app.inject('/v1/towns')).json(), ['Ny\u00e9ri'], 'listed once, composed')
  for (const spelling of ['Ny%C3%A9ri', 'Nye%CC%81ri', 'NYE%CC%81RI']) {
    const rows = (await app.inject(`/v1/prices?town=${spelling}`)).json() as Array<{ town: string }>
    t.same(rows.map((r) => r.town), ['Ny\u00e9ri', 'Ny\u00e9ri'], `${spelling} finds both cycles' rows`)
  }
})

t.test('[D48] names whose case mapping is not one letter, and parentheses, upload back unchanged', async (t) => {
  const app = await build(t)
  await resetData()
  const towns = ['\ufb01nlay', 'Finlay', '\u00dftadt', 'Sstadt', 'Town (Central)', '\u0130zmir', 'Murang\'a']
  const file = csv(HEADER, ...towns.map((town, i) => `${JAN},${town},${180 + i}.00,170.00,160.00`))
  const first = await upload(app, file)
  t.equal(first.statusCode, 201)
  t.match(first.json(), { inserted: 7 })
  t.same((await app.inject('/v1/towns')).json(), ['\u00dftadt', 'Finlay', 'Murang\'a', 'Sstadt', 'Town (Central)', '\u0130zmir', '\ufb01nlay'].sort((a, b) => a.toLowerCase() < b.toLowerCase() ? -1 : 1))
  // The cycle's export, uploaded back, changes nothing.
  const exported = await app.inject('/v1/prices.csv?start_date=2026-01-15&end_date=2026-02-14')
  t.equal(exported.statusCode, 200)
  const again = await upload(app, exported.body)
  t.equal(again.statusCode, 201, again.body)
  t.match(again.json(), { records_processed: 7, inserted: 0, updated: 0, unchanged: 7 })
  for (const [query, town] of [['FINLAY', 'Finlay'], ['%EF%AC%81nlay', '\ufb01nlay'], ['town%20(central)', 'Town (Central)'], ['%C3%9FTADT', '\u00dftadt']]) {
    const rows = (await app.inject(`/v1/prices?town=${query}`)).json() as Array<{ town: string }>
    t.same(rows.map((r) => r.town), [town], `${query}: one row, ${town}`)
  }
})

t.test('[D48] the read cache and the database agree, whichever spelling is asked first', async (t) => {
  for (const order of [['%C4%B0ZMIR', '%C4%B0zmir'], ['%C4%B0zmir', '%C4%B0ZMIR']]) {
    const app = await build(t)
    await resetData()
    t.equal((await upload(app, csv(HEADER, `${JAN},\u0130zmir,180.00,170.00,160.00`))).statusCode, 201)
    for (const spelling of order) {
      const rows = (await app.inject(`/v1/prices?town=${spelling}&limit=8`)).json() as Array<{ town: string }>
      t.same(rows.map((r) => r.town), ['\u0130zmir'], `${order.join(' then ')}: ${spelling} finds the row`)
      const latest = (await app.inject(`/v1/prices/latest?town=${spelling}`)).json() as Array<{ town: string }>
      t.same(latest.map((r) => r.town), ['\u0130zmir'], `${order.join(' then ')}: latest for ${spelling}`)
    }
    await app.close()
  }
})
