import t from '../support/file-test.js'
import { normalizeTown } from '../../src/domain/town.js'
import { parseCycleCsv } from '../../src/ingest/csv.js'
import { CSV_HEADER as SAMPLE_HEADER } from '../../src/domain/price-csv.js'
import { loadSampleTowns, sampleCycles } from '../../scripts/sample/generate.js'

const towns = loadSampleTowns()

t.test('loadSampleTowns reads the 233 committed towns, already in D4 form and unique', async (t) => {
  t.equal(towns.length, 233)
  t.equal(towns[0], 'Mombasa')
  t.equal(towns.at(-1), 'Tabaka')
  t.ok(towns.includes("Murang'a") && towns.includes("Moi's Bridge") && towns.includes('Nairobi'))
  t.strictSame(towns.map(normalizeTown), towns, 'D4 leaves them unchanged')
  t.equal(new Set(towns).size, 233, 'D9: no duplicates')
})

t.test('[D7] sampleCycles writes the ingest header and DD-MM-YYYY dates, deterministically', async (t) => {
  const text = sampleCycles({ towns: ['Mombasa', 'Nairobi', 'Mandera', 'Ruiru, Juja'], cycles: 2, lastValidFrom: '2026-01-15' })
  t.equal(text, [
    SAMPLE_HEADER,
    '15-12-2025,14-01-2026,Mombasa,177.46,163.87,141.50',
    '15-12-2025,14-01-2026,Nairobi,183.28,169.69,147.32',
    '15-12-2025,14-01-2026,Mandera,193.06,179.47,157.10',
    '15-12-2025,14-01-2026,"Ruiru, Juja",183.33,169.74,147.37',
    '15-01-2026,14-02-2026,Mombasa,173.79,161.33,143.48',
    '15-01-2026,14-02-2026,Nairobi,179.61,167.15,149.30',
    '15-01-2026,14-02-2026,Mandera,189.39,176.93,159.08',
    '15-01-2026,14-02-2026,"Ruiru, Juja",179.66,167.20,149.35',
    ''
  ].join('\n'))
  t.equal(SAMPLE_HEADER, 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)')
})

t.test('[D5–D9] sampleCycles output parses cleanly into 233 × N rows ending at lastValidFrom', async (t) => {
  const cycles = 14
  const rows = parseCycleCsv(sampleCycles({ towns, cycles, lastValidFrom: '2026-03-15' }))
  t.equal(rows.length, 233 * cycles)
  t.strictSame([rows[0]?.validFrom, rows[0]?.validTo], ['2025-02-15', '2025-03-14'], 'first cycle')
  t.strictSame([rows.at(-1)?.validFrom, rows.at(-1)?.validTo], ['2026-03-15', '2026-04-14'], 'last cycle')
  t.equal(new Set(rows.map((r) => r.validFrom)).size, cycles, 'consecutive cycles, one per month')
  t.strictSame(rows.slice(0, 233).map((r) => r.town), towns, 'every town in every cycle')
})

t.test('sampleCycles prices are plausible for Kenya and vary by town and month', async (t) => {
  const rows = parseCycleCsv(sampleCycles({ towns, cycles: 36, lastValidFrom: '2026-01-15' }))
  const within = (key: 'superPetrol' | 'diesel' | 'kerosene', low: number, high: number) =>
    rows.every((r) => Number(r[key]) >= low && Number(r[key]) <= high)
  t.ok(within('superPetrol', 170, 200), 'super 170–200')
  t.ok(within('diesel', 160, 190), 'diesel 160–190')
  t.ok(within('kerosene', 140, 180), 'kerosene 140–180')

  const last = rows.filter((r) => r.validFrom === '2026-01-15')
  const price = (town: string) => Number(last.find((r) => r.town === town)?.superPetrol)
  t.ok(price('Mombasa') < price('Nairobi') && price('Nairobi') < price('Mandera'), 'dearer farther from Mombasa')
  const nairobi = new Set(rows.filter((r) => r.town === 'Nairobi').map((r) => r.superPetrol))
  t.ok(nairobi.size > 20, 'changes from month to month')
})

t.test('sampleCycles gives a cycle the same prices however many cycles are asked for', async (t) => {
  const short = sampleCycles({ towns, cycles: 2, lastValidFrom: '2026-01-15' })
  const long = sampleCycles({ towns, cycles: 5, lastValidFrom: '2026-01-15' })
  t.ok(long.endsWith(short.slice(short.indexOf('\n') + 1)))
  t.equal(sampleCycles({ towns, cycles: 2, lastValidFrom: '2026-01-15' }), short, 'same input, same output')
})

t.test('[D8] sampleCycles refuses a lastValidFrom that is not a 15th, or no cycles', async (t) => {
  t.throws(() => sampleCycles({ towns, cycles: 1, lastValidFrom: '2026-01-14' }), RangeError)
  t.throws(() => sampleCycles({ towns, cycles: 0, lastValidFrom: '2026-01-15' }), RangeError)
  t.throws(() => sampleCycles({ towns, cycles: 1.5, lastValidFrom: '2026-01-15' }), RangeError)
})
