import t from '../support/file-test.js'
import { FUELS } from '../../src/domain/fuels.js'
import { CSV_COLUMNS } from '../../src/domain/price-csv.js'
import { CycleSummary, FuelPrice, PriceWarning } from '../../src/generated/openapi.js'
import { parseCycleCsv } from '../../src/ingest/csv.js'

/** The fuels are listed once (src/domain/fuels.ts); the contract, the CSV and the row agree with it. */

t.test('the keys are the contract\'s, in its order', async (t) => {
  const keys = FUELS.map((f) => f.key)
  t.strictSame(keys, ['super_petrol', 'diesel', 'kerosene'])
  t.strictSame((PriceWarning.properties.fuel as unknown as { enum: string[] }).enum, keys, 'a warning names a fuel by its key')
  t.strictSame(Object.keys(FuelPrice.properties).filter((k) => keys.includes(k as never)), keys, 'a price carries each, in this order')
  t.strictSame(Object.keys(CycleSummary.properties).filter((k) => keys.includes(k as never)), keys, 'and a cycle\'s statistics')
})

t.test('the labels are the CSV\'s price columns, and a row\'s fields hold those columns\' prices', async (t) => {
  t.strictSame(CSV_COLUMNS, ['From', 'To', 'Town', 'Super (PMS)', 'Diesel (AGO)', 'Kerosene (IK)'])
  const [row] = parseCycleCsv(`${CSV_COLUMNS.join(',')}\n15-10-2026,14-11-2026,Nairobi,180.50,170.25,150.75\n`)
  t.strictSame(FUELS.map((f) => [f.label, row?.[f.field]]), [['Super (PMS)', '180.50'], ['Diesel (AGO)', '170.25'], ['Kerosene (IK)', '150.75']])
})
