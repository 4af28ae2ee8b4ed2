import t from '../support/file-test.js'
import { HEADER, csv, upload } from '../fixtures/ingest.js'
import { SAMPLE_TOWNS } from '../fixtures/towns.js'
import { build, resetData } from '../helper.js'

/** D48: a dry run lists at most 1,000 price warnings, newest cycle first, and counts the rest. */
t.test('[D48] the warnings a dry run lists are capped, the rest counted per cycle', async (t) => {
  const app = await build(t)
  await resetData()
  const cycle = (dates: string, price: string): string[] => SAMPLE_TOWNS.map((town) => `${dates},${town},${price},${price},${price}`)
  // Every town's three prices double, then halve: 233 × 3 = 699 warnings in each of two cycles.
  const file = csv(HEADER, ...cycle('15-01-2026,14-02-2026', '100.00'), ...cycle('15-02-2026,14-03-2026', '200.00'), ...cycle('15-03-2026,14-04-2026', '100.00'))
  const res = await upload(app, file, { query: '/dry-run' })
  t.equal(res.statusCode, 200)
  const body = res.json() as { cycles: Array<{ valid_from: string, warnings: unknown[], warnings_not_listed: number }> }
  t.same(body.cycles.map((c) => [c.valid_from, c.warnings.length, c.warnings_not_listed]), [
    ['2026-03-15', 699, 0],
    ['2026-02-15', 301, 398],
    ['2026-01-15', 0, 0]
  ])
  t.ok(res.body.length < 400_000, `a bounded answer (${res.body.length} bytes)`)
})
