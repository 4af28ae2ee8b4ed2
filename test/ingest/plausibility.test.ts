import t from 'tap'
import type { PriceRow, StoredPrice } from '../../src/domain/price-rows.js'
import { reviewCycles } from '../../src/ingest/plausibility.js'

const OCT = ['2026-10-15', '2026-11-14'] as const
const NOV = ['2026-11-15', '2026-12-14'] as const
let line = 1
const row = (town: string, [validFrom, validTo]: readonly [string, string], superPetrol: string, diesel = '170.00', kerosene = '150.00'): PriceRow =>
  ({ line: ++line, town, validFrom, validTo, superPetrol, diesel, kerosene })
const stored = (town: string, validFrom: string, superPetrol: string, diesel = '170.00', kerosene = '150.00'): StoredPrice =>
  ({ validFrom, town, superPetrol, diesel, kerosene })

t.beforeEach(() => { line = 1 })

t.test('[D40] a plausible month: nothing new, nothing missing, no warnings', async (t) => {
  const rows = [row('Nairobi', NOV, '181.00'), row('Mombasa', NOV, '179.00')]
  t.strictSame(reviewCycles(rows, [stored('Nairobi', OCT[0], '180.00'), stored('Mombasa', OCT[0], '178.00')], 0.15), [
    { validFrom: NOV[0], validTo: NOV[1], previousValidFrom: OCT[0], newTowns: [], missingTowns: [], previousTowns: 2, warnings: [] }
  ])
})

t.test('[D40] towns new and missing against the cycle before, in D3 order', async (t) => {
  const rows = [row('Nairobi', NOV, '181.00'), row('Elburgon', NOV, '181.00'), row('El Wak', NOV, '181.00')]
  const before = [stored('Nairobi', OCT[0], '180.00'), stored('Mombasa', OCT[0], '180.00'), stored('Kisumu', OCT[0], '180.00')]
  const [review] = reviewCycles(rows, before, 0.15)
  t.strictSame(review?.newTowns, ['El Wak', 'Elburgon'])
  t.strictSame(review?.missingTowns, ['Kisumu', 'Mombasa'])
  t.equal(review?.previousTowns, 3, 'the towns of the cycle compared with, for the whole-cycle warning (D73)')
})

t.test('[D40] a price moving more than the share warns; exactly the share does not', async (t) => {
  const before = [stored('Nairobi', OCT[0], '200.00'), stored('Mombasa', OCT[0], '200.00'), stored('Kisumu', OCT[0], '200.00')]
  const rows = [row('Nairobi', NOV, '230.00'), row('Mombasa', NOV, '230.01'), row('Kisumu', NOV, '169.99')]
  const [review] = reviewCycles(rows, before, 0.15)
  t.strictSame(review?.warnings, [
    { line: 3, town: 'Mombasa', fuel: 'super_petrol', kind: 'moved', detail: 'Super (PMS) for Mombasa on line 3 moves 15.0% from 200.00 to 230.01 (cycle 2026-10-15).' },
    { line: 4, town: 'Kisumu', fuel: 'super_petrol', kind: 'moved', detail: 'Super (PMS) for Kisumu on line 4 moves 15.0% from 200.00 to 169.99 (cycle 2026-10-15).' },
    // and, beside the other two at 230, it is also an outlier of its own cycle
    { line: 4, town: 'Kisumu', fuel: 'super_petrol', kind: 'outlier', detail: "Super (PMS) for Kisumu on line 4 is 169.99, more than 15.0% outside the cycle's other towns (230.00 to 230.01)." }
  ])
})

t.test('[D40] a price outside the range of the cycle\'s other towns by more than the share warns', async (t) => {
  // A typo: 1800.00 for 180.00, and a diesel of 17.00 for 170.00.
  const rows = [row('Nairobi', NOV, '180.00'), row('Mombasa', NOV, '1800.00'), row('Kisumu', NOV, '182.00', '17.00')]
  const [review] = reviewCycles(rows, [], 0.15)
  t.equal(review?.previousValidFrom, null)
  t.strictSame(review?.warnings, [
    { line: 3, town: 'Mombasa', fuel: 'super_petrol', kind: 'outlier', detail: "Super (PMS) for Mombasa on line 3 is 1800.00, more than 15.0% outside the cycle's other towns (180.00 to 182.00)." },
    { line: 4, town: 'Kisumu', fuel: 'diesel', kind: 'outlier', detail: "Diesel (AGO) for Kisumu on line 4 is 17.00, more than 15.0% outside the cycle's other towns (170.00 to 170.00)." }
  ])
  t.strictSame(reviewCycles(rows, [], 10)[0]?.warnings, [], 'a share of 1000 % tolerates anything')
})

t.test('[D40] several cycles in one file: each compared with the latest before it, stored or in the file', async (t) => {
  const sep = stored('Nairobi', '2026-09-15', '100.00')
  const rows = [row('Nairobi', NOV, '182.00'), row('Nairobi', OCT, '181.00')]
  const reviews = reviewCycles(rows, [sep], 0.15)
  t.strictSame(reviews.map((r) => [r.validFrom, r.previousValidFrom, r.warnings.map((w) => w.detail)]), [
    [NOV[0], OCT[0], []],
    [OCT[0], '2026-09-15', ['Super (PMS) for Nairobi on line 3 moves 81.0% from 100.00 to 181.00 (cycle 2026-09-15).']]
  ])
  // Towns already stored for a cycle count as its towns: re-uploading part of a cycle misses none.
  const partial = reviewCycles([row('Nairobi', NOV, '181.00')], [stored('Nairobi', OCT[0], '180.00'), stored('Mombasa', OCT[0], '180.00'), stored('Mombasa', NOV[0], '180.00')], 0.15)
  t.strictSame(partial[0]?.missingTowns, [])
})
