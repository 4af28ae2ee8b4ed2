import { setImmediate as nextTurn } from 'node:timers/promises'
import t from '../support/file-test.js'
import { cycleStartingIn } from '../../src/domain/cycle.js'
import type { PriceRow, StoredPrice } from '../../src/domain/price-rows.js'
import { REVIEW_LIMITS, reviewCycles, type PriceWarning } from '../../src/ingest/plausibility.js'

const SEP = ['2026-09-15', '2026-10-14'] as const
const OCT = ['2026-10-15', '2026-11-14'] as const
const NOV = ['2026-11-15', '2026-12-14'] as const
let line = 1
const row = (town: string, [validFrom, validTo]: readonly [string, string], superPetrol: string, diesel = '170.00', kerosene = '150.00'): PriceRow =>
  ({ line: ++line, town, validFrom, validTo, superPetrol, diesel, kerosene })
const stored = (town: string, validFrom: string, superPetrol: string, diesel = '170.00', kerosene = '150.00'): StoredPrice =>
  ({ validFrom, town, superPetrol, diesel, kerosene })
const UNLIMITED = { warnings: Infinity, newTowns: Infinity, missingTowns: Infinity, changes: Infinity }
const prices = (superPetrol: number, diesel = 17000, kerosene = 15000): { super_petrol: number, diesel: number, kerosene: number } =>
  ({ super_petrol: superPetrol, diesel, kerosene })

t.beforeEach(() => { line = 1 })

t.test('[D40] a plausible month: nothing new, nothing missing, no warnings; each town\'s two prices listed for the chart', async (t) => {
  const rows = [row('Nairobi', NOV, '181.00'), row('Mombasa', NOV, '179.00')]
  t.strictSame(await reviewCycles(rows, [stored('Nairobi', OCT[0], '180.00'), stored('Mombasa', OCT[0], '178.00')], 0.15), [{
    validFrom: NOV[0],
    validTo: NOV[1],
    previousValidFrom: OCT[0],
    inserted: 2,
    updated: 0,
    newTowns: [],
    newTownsNotListed: 0,
    missingTowns: [],
    missingTownsNotListed: 0,
    previousTowns: 2,
    warnings: [],
    warningsNotListed: 0,
    changes: [
      { town: 'Nairobi', previous: prices(18000), price: prices(18100) },
      { town: 'Mombasa', previous: prices(17800), price: prices(17900) }
    ],
    changesNotListed: 0
  }])
})

t.test('[D40] towns new and missing against the cycle before, in D3 order', async (t) => {
  const rows = [row('Nairobi', NOV, '181.00'), row('Elburgon', NOV, '181.00'), row('El Wak', NOV, '181.00')]
  const before = [stored('Nairobi', OCT[0], '180.00'), stored('Mombasa', OCT[0], '180.00'), stored('Kisumu', OCT[0], '180.00')]
  const [review] = await reviewCycles(rows, before, 0.15)
  t.strictSame(review?.newTowns, ['El Wak', 'Elburgon'])
  t.strictSame(review?.missingTowns, ['Kisumu', 'Mombasa'])
  t.equal(review?.previousTowns, 3, 'the towns of the cycle compared with, for the whole-cycle warning (D73)')
  t.strictSame(review?.changes.map((c) => c.town), ['Nairobi'], 'only a town with a previous price is charted')
})

t.test('[D40] a price moving more than the share warns; exactly the share does not', async (t) => {
  const before = [stored('Nairobi', OCT[0], '200.00'), stored('Mombasa', OCT[0], '200.00'), stored('Kisumu', OCT[0], '200.00')]
  const rows = [row('Nairobi', NOV, '230.00'), row('Mombasa', NOV, '230.01'), row('Kisumu', NOV, '169.99')]
  const [review] = await reviewCycles(rows, before, 0.15)
  t.strictSame(review?.warnings, [
    { line: 3, town: 'Mombasa', fuel: 'super_petrol', kind: 'moved', price: 23001, previous: 20000, detail: 'Super (PMS) for Mombasa on line 3 moves 15.0% from 200.00 to 230.01 (cycle 2026-10-15).' },
    { line: 4, town: 'Kisumu', fuel: 'super_petrol', kind: 'moved', price: 16999, previous: 20000, detail: 'Super (PMS) for Kisumu on line 4 moves 15.0% from 200.00 to 169.99 (cycle 2026-10-15).' },
    // and, beside the other two at 230, it is also an outlier of its own cycle
    { line: 4, town: 'Kisumu', fuel: 'super_petrol', kind: 'outlier', price: 16999, previous: 20000, detail: "Super (PMS) for Kisumu on line 4 is 169.99, more than 15.0% outside the cycle's other towns (230.00 to 230.01)." }
  ])
})

t.test('[D40] a price outside the range of the cycle\'s other towns by more than the share warns', async (t) => {
  // A typo: 1800.00 for 180.00, and a diesel of 17.00 for 170.00.
  const rows = [row('Nairobi', NOV, '180.00'), row('Mombasa', NOV, '1800.00'), row('Kisumu', NOV, '182.00', '17.00')]
  const [review] = await reviewCycles(rows, [], 0.15)
  t.equal(review?.previousValidFrom, null)
  t.strictSame(review?.warnings, [
    { line: 3, town: 'Mombasa', fuel: 'super_petrol', kind: 'outlier', price: 180000, previous: null, detail: "Super (PMS) for Mombasa on line 3 is 1800.00, more than 15.0% outside the cycle's other towns (180.00 to 182.00)." },
    { line: 4, town: 'Kisumu', fuel: 'diesel', kind: 'outlier', price: 1700, previous: null, detail: "Diesel (AGO) for Kisumu on line 4 is 17.00, more than 15.0% outside the cycle's other towns (170.00 to 170.00)." }
  ])
  t.strictSame(review?.changes, [], 'no cycle before: nothing to chart')
  t.strictSame((await reviewCycles(rows, [], 10))[0]?.warnings, [], 'a share of 1000 % tolerates anything')
})

t.test('[D57] "the cycle\'s other towns" by each fuel\'s two lowest and two highest: the old rule\'s answers, written out by hand', async (t) => {
  // September: one town, so no other town to compare with. October: P holds the highest super,
  // tied with Q, so the others' highest is still 200.00 and P is no outlier; R lies below both.
  // November: A and B tie in the middle, C holds the unique highest, D the unique lowest.
  const rows = [
    row('Z', SEP, '999.99'),
    row('P', OCT, '200.00'), row('Q', OCT, '200.00'), row('R', OCT, '150.00'),
    row('A', NOV, '100.00'), row('B', NOV, '100.00'), row('C', NOV, '130.00'), row('D', NOV, '80.00')
  ]
  const reviews = await reviewCycles(rows, [], 0.15)
  t.strictSame(reviews.map((r) => [r.validFrom, r.previousValidFrom, r.newTowns, r.missingTowns]), [
    [NOV[0], OCT[0], ['A', 'B', 'C', 'D'], ['P', 'Q', 'R']],
    [OCT[0], SEP[0], ['P', 'Q', 'R'], ['Z']],
    [SEP[0], null, [], []]
  ])
  t.strictSame(reviews.map((r) => r.warnings.map((w) => w.detail)), [
    [
      "Super (PMS) for C on line 8 is 130.00, more than 15.0% outside the cycle's other towns (80.00 to 100.00).",
      "Super (PMS) for D on line 9 is 80.00, more than 15.0% outside the cycle's other towns (100.00 to 130.00)."
    ],
    ["Super (PMS) for R on line 5 is 150.00, more than 15.0% outside the cycle's other towns (200.00 to 200.00)."],
    []
  ])
})

/** The rule as it was first written: each row's fuel against every other town of its cycle (3·N² a cycle). */
function quadraticOutliers (rows: readonly PriceRow[], storedRows: readonly StoredPrice[], share: number): Array<Pick<PriceWarning, 'line' | 'fuel' | 'detail'>> {
  const key = (town: string): string => town.toLowerCase()
  const cents = (p: string): number => Math.round(Number(p) * 100)
  const cycle = new Map<string, Map<string, Record<'superPetrol' | 'diesel' | 'kerosene', string>>>()
  for (const r of [...storedRows, ...rows]) {
    if (!cycle.has(r.validFrom)) cycle.set(r.validFrom, new Map())
    cycle.get(r.validFrom)?.set(key(r.town), r)
  }
  const out: Array<Pick<PriceWarning, 'line' | 'fuel' | 'detail'>> = []
  const fuels = [['super_petrol', 'superPetrol', 'Super (PMS)'], ['diesel', 'diesel', 'Diesel (AGO)'], ['kerosene', 'kerosene', 'Kerosene (IK)']] as const
  for (const r of [...rows].sort((a, b) => (a.validFrom < b.validFrom ? 1 : a.validFrom > b.validFrom ? -1 : a.line - b.line))) {
    for (const [fuel, field, name] of fuels) {
      let low = Infinity
      let high = -Infinity
      for (const [other, prices] of cycle.get(r.validFrom) ?? []) {
        if (other === key(r.town)) continue
        low = Math.min(low, cents(prices[field]))
        high = Math.max(high, cents(prices[field]))
      }
      const c = cents(r[field])
      if (low !== Infinity && (c > high * (1 + share) || c < low * (1 - share))) {
        out.push({ line: r.line, fuel, detail: `${name} for ${r.town} on line ${r.line} is ${(c / 100).toFixed(2)}, more than ${(share * 100).toFixed(1)}% outside the cycle's other towns (${(low / 100).toFixed(2)} to ${(high / 100).toFixed(2)}).` })
      }
    }
  }
  return out
}

t.test('[D57] on a file full of outliers and ties, partly stored, the linear rule finds exactly what the quadratic one found', async (t) => {
  // A fixed pseudo-random file: 40 cycles of 6 towns from a handful of prices, so both ties at the
  // extremes and lone extremes abound.
  let seed = 7
  const next = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return Math.floor(seed / 65536) % n }
  const choices = ['80.00', '100.00', '100.00', '101.50', '120.00', '150.00', '150.00', '199.99', '400.00']
  const pick = (): string => choices[next(choices.length)] as string
  const rows: PriceRow[] = []
  const storedRows: StoredPrice[] = []
  for (let month = 0; month < 40; month++) {
    const { validFrom, validTo } = cycleStartingIn(2020 * 12 + month)
    for (let i = 0; i < 6; i++) {
      const cells = [pick(), pick(), pick()] as const
      // Some towns are stored already (some at other prices): a cycle is both the file's and the table's.
      if (i % 3 === 0) storedRows.push(stored(`Town ${i}`, validFrom, pick(), cells[1], cells[2]))
      if (i % 3 !== 1) rows.push(row(`Town ${i}`, [validFrom, validTo], ...cells))
      else storedRows.push(stored(`Town ${i}`, validFrom, ...cells))
    }
  }
  const reviews = await reviewCycles(rows, storedRows, 0.15, UNLIMITED)
  const outliers = reviews.flatMap((r) => r.warnings.filter((w) => w.kind === 'outlier').map((w) => ({ line: w.line, fuel: w.fuel, detail: w.detail })))
  const expected = quadraticOutliers(rows, storedRows, 0.15)
  t.equal(outliers.length, expected.length)
  t.ok(expected.length > 20, `the fixture has outliers to find (${expected.length})`)
  t.strictSame(outliers, expected)
})

t.test('[D40] several cycles in one file: each compared with the latest before it, stored or in the file', async (t) => {
  const sep = stored('Nairobi', '2026-09-15', '100.00')
  const rows = [row('Nairobi', NOV, '182.00'), row('Nairobi', OCT, '181.00')]
  const reviews = await reviewCycles(rows, [sep], 0.15)
  t.strictSame(reviews.map((r) => [r.validFrom, r.previousValidFrom, r.warnings.map((w) => w.detail)]), [
    [NOV[0], OCT[0], []],
    [OCT[0], '2026-09-15', ['Super (PMS) for Nairobi on line 3 moves 81.0% from 100.00 to 181.00 (cycle 2026-09-15).']]
  ])
  t.strictSame(reviews.map((r) => r.changes), [
    [{ town: 'Nairobi', previous: prices(18100), price: prices(18200) }],
    [{ town: 'Nairobi', previous: prices(10000), price: prices(18100) }]
  ], 'the previous cycle as it will stand: the file\'s October, not a stored one')
  // Towns already stored for a cycle count as its towns: re-uploading part of a cycle misses none.
  const partial = await reviewCycles([row('Nairobi', NOV, '181.00')], [stored('Nairobi', OCT[0], '180.00'), stored('Mombasa', OCT[0], '180.00'), stored('Mombasa', NOV[0], '180.00')], 0.15)
  t.strictSame(partial[0]?.missingTowns, [])
})

t.test('[D15] each cycle counts the rows the upsert would insert and update, against the stored records', async (t) => {
  const rows = [
    row('Nairobi', NOV, '181.00'), // stored, same prices: unchanged
    row('Mombasa', NOV, '179.50'), // stored at 179.00: updated
    row('Kisumu', NOV, '180.00', '170.00', '151.00'), // stored, kerosene differs: updated
    row('Eldoret', NOV, '180.00'), // new
    row('Nairobi', OCT, '180.00') // October: new
  ]
  const reviews = await reviewCycles(rows, [
    stored('Nairobi', NOV[0], '181.00'), stored('Mombasa', NOV[0], '179.00'), stored('Kisumu', NOV[0], '180.00'), stored('Nakuru', NOV[0], '180.00')
  ], 0.15)
  t.strictSame(reviews.map((r) => [r.validFrom, r.inserted, r.updated]), [[NOV[0], 1, 2], [OCT[0], 1, 0]])
})

t.test('[D48] one dry run lists a bounded number of warnings, towns and charted prices, newest cycle first, and counts the rest exactly', async (t) => {
  // October: 8 towns at 100.00. November: the same towns at 200.00 (8 super "moved" warnings), the
  // first five replaced by 12 new ones (listed in D3 order, whatever the file's order).
  const octTowns = ['H', 'G', 'F', 'E', 'D', 'C', 'B', 'A']
  const newTowns = ['Zeta', 'Alpha', 'Mu', 'Beta', 'Omega', 'Kappa', 'Eta', 'Iota', 'Gamma', 'Delta', 'Nu', 'Xi']
  const rows = [
    ...octTowns.map((town) => row(town, OCT, '100.00')),
    ...octTowns.slice(5).map((town) => row(town, NOV, '200.00')),
    ...newTowns.map((town) => row(town, NOV, '200.00'))
  ]
  const limits = { warnings: 2, newTowns: 5, missingTowns: 3, changes: 2 }
  const [nov, oct] = await reviewCycles(rows, [], 0.15, limits)
  t.strictSame([nov?.newTowns, nov?.newTownsNotListed], [['Alpha', 'Beta', 'Delta', 'Eta', 'Gamma'], 7])
  t.strictSame([nov?.missingTowns, nov?.missingTownsNotListed], [['D', 'E', 'F'], 2])
  t.strictSame([nov?.warnings.map((w) => `${w.town} ${w.kind}`), nov?.warningsNotListed], [['C moved', 'B moved'], 1])
  t.strictSame([nov?.changes.map((c) => c.town), nov?.changesNotListed], [['C', 'B'], 1])
  // October has nothing before it in this file: its lists were empty anyway.
  t.strictSame([oct?.newTowns, oct?.newTownsNotListed, oct?.warnings, oct?.changes], [[], 0, [], []])

  // The budget is the answer's: what November used is not October's.
  const stored3 = ['B', 'A', 'C'].map((town) => stored(town, SEP[0], '100.00'))
  const both = await reviewCycles(rows, stored3, 0.15, limits)
  t.strictSame(both.map((r) => [r.validFrom, r.newTowns.length, r.newTownsNotListed, r.missingTowns.length, r.missingTownsNotListed]), [
    [NOV[0], 5, 7, 3, 2],
    [OCT[0], 0, 5, 0, 0] // H, G, F, E, D are new in October; the five names went to November
  ])
  t.strictSame(REVIEW_LIMITS, { warnings: 1000, newTowns: 1000, missingTowns: 1000, changes: 5000 })
})

t.test('[D57] a review of 20,000 towns is linear and lets other callbacks run while it works', async (t) => {
  const towns = 20_000
  const before = Array.from({ length: towns }, (_, i) => stored(`Town ${i}`, OCT[0], '180.00'))
  const rows = Array.from({ length: towns }, (_, i) => row(`Town ${i}`, NOV, i === 7 ? '1800.00' : '181.00'))
  let turns = 0
  let reviewing = true
  const count = async (): Promise<void> => { while (reviewing) { await nextTurn(); turns++ } }
  const counting = count()
  // CPU time, not wall time: on a busy machine the wall clock also counts the turns other processes get.
  const cpu = process.cpuUsage()
  const [review] = await reviewCycles(rows, before, 0.15)
  const { user, system } = process.cpuUsage(cpu)
  reviewing = false
  await counting
  const ms = (user + system) / 1000
  t.ok(ms < 5000, `20,000 towns reviewed in ${Math.round(ms)} ms of CPU (the quadratic rule took about a minute)`)
  t.ok(turns > 1, `the event loop turned ${turns} times during the review`)
  t.strictSame(review?.warnings.map((w) => `${w.town} ${w.kind}`), ['Town 7 moved', 'Town 7 outlier'])
  t.strictSame([review?.inserted, review?.changes.length, review?.changesNotListed], [towns, 5000, towns - 5000])
})
