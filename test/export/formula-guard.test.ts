import Papa from 'papaparse'
import t from '../support/file-test.js'
import { csvField, csvLine } from '../../src/export/csv.js'
import { disarmFormula, looksLikeFormula } from '../../src/export/formula-guard.js'
import type { FuelPrice } from '../../src/generated/openapi.js'
import { build, insertPrices, resetData } from '../helper.js'
import { AUTH, HEADER, TOKEN, csv, rowCount, upload } from '../fixtures/ingest.js'

/** D31: no exported cell runs as a spreadsheet formula; exports of ingested data still round-trip. */

const row = (overrides: Partial<FuelPrice> = {}): FuelPrice => ({
  id: 1, town: 'Nairobi', super_petrol: 180.5, diesel: 170, kerosene: 150.25, valid_from: '2026-10-15', valid_to: '2026-11-14', ...overrides
})

t.test('[D31] every OWASP formula starter is disarmed with an apostrophe, and quoted', async (t) => {
  t.equal(csvField('=HYPERLINK("http://evil.example","Click")'), '"\'=HYPERLINK(""http://evil.example"",""Click"")"')
  t.equal(csvField('=1+1'), '"\'=1+1"')
  t.equal(csvField('+1'), '"\'+1"')
  t.equal(csvField('-1'), '"\'-1"')
  t.equal(csvField('@SUM(1)'), '"\'@SUM(1)"')
  t.equal(csvField('\t=1+1'), '"\'\t=1+1"')
  t.equal(csvField('\r=1+1'), '"\'\r=1+1"')
  t.equal(disarmFormula('=1'), "'=1")
})

t.test('[D31] other cells are left as they were', async (t) => {
  for (const cell of ['Nairobi', "Murang'a", 'Kapsabet-Nandi', 'A=B', 'Town+1', 'x@y', '180.50', '15-10-2026', "'=already", '']) {
    t.equal(looksLikeFormula(cell), false, cell)
    t.equal(disarmFormula(cell), cell, cell)
  }
  t.equal(csvField('Kisumu, West'), '"Kisumu, West"', 'RFC 4180 quoting unchanged')
})

t.test('[D31] a whole line: the town and a negative price are disarmed; a CSV reader sees the apostrophe', async (t) => {
  const line = csvLine(row({ town: '@SUM(1)', super_petrol: -5 }))
  t.equal(line, '15-10-2026,14-11-2026,"\'@SUM(1)","\'-5.00",170.00,150.25\r\n')
  t.strictSame(Papa.parse<string[]>(line.trim()).data, [['15-10-2026', '14-11-2026', "'@SUM(1)", "'-5.00", '170.00', '150.25']])
})

t.test('[D31][D30] rows stored before D30 export disarmed, and their re-upload is refused, nothing written', async (t) => {
  await resetData()
  await insertPrices([
    { town: '=HYPERLINK("http://evil.example","Click")', superPetrol: '180.50', diesel: '170.00', kerosene: '150.25', validFrom: '2026-10-15' },
    { town: '+1', superPetrol: '180.50', diesel: '170.00', kerosene: '150.25', validFrom: '2026-10-15' },
    { town: '@SUM(1)', superPetrol: '180.50', diesel: '170.00', kerosene: '150.25', validFrom: '2026-10-15' }
  ])
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const exported = await app.inject('/v1/prices?format=csv')
  t.equal(exported.statusCode, 200)
  t.equal(exported.body, [
    HEADER,
    '15-10-2026,14-11-2026,"\'+1",180.50,170.00,150.25',
    '15-10-2026,14-11-2026,"\'=HYPERLINK(""http://evil.example"",""Click"")",180.50,170.00,150.25',
    '15-10-2026,14-11-2026,"\'@SUM(1)",180.50,170.00,150.25',
    ''
  ].join('\r\n'))
  const again = await upload(app, exported.body, { query: '?dry_run=true', headers: AUTH })
  t.equal(again.statusCode, 400)
  t.strictSame(again.json(), { detail: "Invalid town name on line 2: '+1", line: 2, column: 'Town' })
  t.equal(await rowCount(), 3)
})

t.test('[D31][D30] an export of ingested towns, in any script, re-uploads unchanged (dry run)', async (t) => {
  await resetData()
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const towns = ["MURANG'A", "moi's bridge", 'kapsabet-nandi', 'st. mary\'s', 'kisumu (kondele)', 'Νέα Σμύρνη', 'москва', '東京', 'नैरोबी', 'Me\u0301ru\u0300', 'kilometre 14']
  const first = await upload(app, csv(HEADER, ...towns.map((town) => `15-10-2026,14-11-2026,${town},180.50,170.00,150.25`)))
  t.equal(first.statusCode, 201)
  const exported = await app.inject('/v1/prices?format=csv')
  t.notMatch(exported.body, /(^|,)"?'/m, 'nothing needed disarming')
  const dry = await upload(app, exported.body, { query: '?dry_run=true', headers: AUTH })
  t.equal(dry.statusCode, 200)
  t.match(dry.json(), { status: 'dry_run', records_processed: towns.length, inserted: 0, updated: 0, unchanged: towns.length })
})
