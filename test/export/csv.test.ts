import t from '../support/file-test.js'
import { CSV_HEADER, csvDate, csvField, csvLine, csvLines, csvPrice } from '../../src/export/csv.js'
import type { FuelPrice } from '../../src/generated/openapi.js'

const row = (overrides: Partial<FuelPrice> = {}): FuelPrice => ({
  id: 1,
  town: 'Nairobi',
  super_petrol: 180.5,
  diesel: 170,
  kerosene: 150.25,
  valid_from: '2026-10-15',
  valid_to: '2026-11-14',
  ...overrides
})

t.test('[spec 4.5] the header is the ingest header, columns in its order', async (t) => {
  t.equal(CSV_HEADER, 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)')
})

t.test('[D7] dates are written DD-MM-YYYY', async (t) => {
  t.equal(csvDate('2026-10-15'), '15-10-2026')
  t.equal(csvDate('1999-01-14'), '14-01-1999')
  t.throws(() => csvDate('15-10-2026'), { message: 'not an ISO date: 15-10-2026' })
})

t.test('[D5] prices keep two decimals and never drift', async (t) => {
  t.equal(csvPrice(180.5), '180.50')
  t.equal(csvPrice(180), '180.00')
  t.equal(csvPrice(0.01), '0.01')
  t.equal(csvPrice(9999.99), '9999.99')
  // Every value numeric(6,2) can hold comes back exactly from its float8 form.
  const wrong: string[] = []
  for (let cents = 1; cents <= 999_999; cents += 7) {
    const text = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`
    if (csvPrice(Number(text)) !== text) wrong.push(text)
  }
  t.same(wrong, [])
  t.throws(() => csvPrice(Number.NaN), { message: 'not a price: NaN' })
})

t.test('RFC 4180: a town is quoted only when it must be', async (t) => {
  t.equal(csvField("Moi's Bridge"), "Moi's Bridge")
  t.equal(csvField('Kapsabet-Nandi'), 'Kapsabet-Nandi')
  t.equal(csvField('Kisumu, West'), '"Kisumu, West"')
  t.equal(csvField('Ol"kalou'), '"Ol""kalou"')
  t.equal(csvField('Two\nLines'), '"Two\nLines"')
  t.equal(csvField('Carriage\rReturn'), '"Carriage\rReturn"')
  t.equal(csvField(' Padded '), '" Padded "')
  t.equal(csvField(''), '')
})

t.test('a record becomes one CRLF-terminated line in header order', async (t) => {
  t.equal(csvLine(row()), '15-10-2026,14-11-2026,Nairobi,180.50,170.00,150.25\r\n')
  t.equal(csvLine(row({ town: 'Kisumu, West', super_petrol: 181.35, diesel: 171.3, kerosene: 151.5 })),
    '15-10-2026,14-11-2026,"Kisumu, West",181.35,171.30,151.50\r\n')
  t.equal(csvLines([row(), row({ town: 'Mombasa', valid_from: '2026-09-15', valid_to: '2026-10-14' })]),
    '15-10-2026,14-11-2026,Nairobi,180.50,170.00,150.25\r\n15-09-2026,14-10-2026,Mombasa,180.50,170.00,150.25\r\n')
  t.equal(csvLines([]), '')
})
