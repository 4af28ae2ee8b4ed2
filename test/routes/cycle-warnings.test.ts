import t from '../support/file-test.js'
import { HEADER, TOKEN, csv, rowCount, upload, withoutTimestamp } from '../fixtures/ingest.js'
import { SAMPLE_TOWNS } from '../fixtures/towns.js'
import { build, resetData } from '../helper.js'

/**
 * D73 through the dry run: a partial cycle and one far ahead are warned of, never refused. Today is
 * the service's clock set to 20 November 2026 (today's cycle: 15 November), not the real date.
 */

const NOW = new Date('2026-11-20T09:00:00Z')
const cycleFile = (from: string, to: string, towns: readonly string[]): string =>
  csv(HEADER, ...towns.map((town, i) => `${from},${to},${town},${180 + (i % 20)}.00,${170 + (i % 9)}.00,160.00`))
const NOVEMBER = cycleFile('15-11-2026', '14-12-2026', SAMPLE_TOWNS)
const DECEMBER = cycleFile('15-12-2026', '14-01-2027', SAMPLE_TOWNS)
const JANUARY_FIVE = cycleFile('15-01-2027', '14-02-2027', SAMPLE_TOWNS.slice(0, 5))

interface DryCycle { valid_from: string, missing_towns: string[], cycle_warnings: unknown[] }

t.beforeEach(resetData)

t.test('[D73] 5 towns for the cycle after next: both warnings; a full file for the next cycle: none; neither refused', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN, now: () => NOW } })
  t.equal((await upload(app, NOVEMBER)).statusCode, 201)

  const partial = await upload(app, JANUARY_FIVE, { query: '/dry-run' })
  t.equal(partial.statusCode, 200)
  const [january] = partial.json().cycles as DryCycle[]
  t.equal(january?.missing_towns.length, 228)
  t.strictSame(january?.cycle_warnings, [
    { kind: 'missing_towns', detail: 'Cycle 2027-01-15 would lack 228 of the 233 towns of cycle 2026-11-15 (97.9%, more than 10.0%).' },
    { kind: 'early', detail: "Cycle 2027-01-15 starts 2 cycles after today's (2026-11-15 in Kenya): once uploaded, /v1/prices/latest serves it at once, though it is not in force until 2027-01-15." }
  ])

  const full = await upload(app, DECEMBER, { query: '/dry-run' })
  t.equal(full.statusCode, 200)
  t.strictSame((full.json().cycles as DryCycle[]).map((c) => [c.valid_from, c.missing_towns, c.cycle_warnings]), [['2026-12-15', [], []]])
  t.equal(await rowCount(), 233, 'dry runs write nothing')

  // A warning never refuses the real upload: the partial, early cycle is stored and served at once.
  const real = await upload(app, JANUARY_FIVE)
  t.equal(real.statusCode, 201)
  t.strictSame(withoutTimestamp(real.json()), { status: 'success', records_processed: 5, inserted: 5, updated: 0, unchanged: 0 })
  t.strictSame(((await app.inject('/v1/prices/latest')).json() as Array<{ valid_from: string }>).map((p) => p.valid_from), Array(5).fill('2027-01-15'))
})

t.test('[D73] INGEST_MISSING_TOWNS_SHARE sets the share; a full next cycle still carries nothing', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN, now: () => NOW, ingestMissingTownsShare: 0.99 } })
  t.equal((await upload(app, NOVEMBER)).statusCode, 201)
  const partial = await upload(app, JANUARY_FIVE, { query: '/dry-run' })
  t.strictSame((partial.json().cycles as DryCycle[]).map((c) => (c.cycle_warnings as Array<{ kind: string }>).map((w) => w.kind)), [['early']], '97.9% is not more than 99%')
  const december = await upload(app, cycleFile('15-12-2026', '14-01-2027', SAMPLE_TOWNS.slice(0, 3)), { query: '/dry-run' })
  t.strictSame((december.json().cycles as DryCycle[]).map((c) => c.cycle_warnings), [[]], 'the next cycle is normal')
})
