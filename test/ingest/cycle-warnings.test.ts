import t from '../support/file-test.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { todayInKenya } from '../../src/domain/cycle.js'
import { cycleWarnings, type ReviewedCycle } from '../../src/ingest/cycle-warnings.js'

/** D73: a dry run's warnings about a whole cycle, as a pure function of the review and today. */

const towns = (n: number): string[] => Array.from({ length: n }, (_, i) => `Town ${i + 1}`)
const cycle = (validFrom: string, missing: number, previousTowns = 100, previousValidFrom: string | null = '2026-10-15'): ReviewedCycle =>
  ({ validFrom, previousValidFrom, missingTowns: towns(missing), missingTownsNotListed: 0, previousTowns })
const TODAY = { today: '2026-11-20', missingTownsShare: 0.1 } // today's cycle: 2026-11-15

t.test('[D73] more than the share of the previous cycle\'s towns missing warns; the share itself does not', async (t) => {
  t.strictSame(cycleWarnings(cycle('2026-11-15', 10), TODAY), [], 'exactly 10%')
  t.strictSame(cycleWarnings(cycle('2026-11-15', 11), TODAY), [
    { kind: 'missing_towns', detail: 'Cycle 2026-11-15 would lack 11 of the 100 towns of cycle 2026-10-15 (11.0%, more than 10.0%).' }
  ])
  t.strictSame(cycleWarnings(cycle('2026-11-15', 11), { ...TODAY, missingTownsShare: 0.25 }), [], 'the share is a setting')
  t.strictSame(cycleWarnings(cycle('2026-11-15', 1, 3), { ...TODAY, missingTownsShare: 0 }), [
    { kind: 'missing_towns', detail: 'Cycle 2026-11-15 would lack 1 of the 3 towns of cycle 2026-10-15 (33.3%, more than 0.0%).' }
  ], 'a share of 0: any missing town')
  t.strictSame(cycleWarnings(cycle('2026-11-15', 0, 0, null), TODAY), [], 'no cycle before it: nothing is missing')
})

t.test('[D73] a cycle two or more cycles after today\'s in Kenya warns; today\'s, the next and past ones do not', async (t) => {
  for (const validFrom of ['2020-01-15', '2026-10-15', '2026-11-15', '2026-12-15']) t.strictSame(cycleWarnings(cycle(validFrom, 0), TODAY), [], validFrom)
  t.strictSame(cycleWarnings(cycle('2027-01-15', 0), TODAY), [{
    kind: 'early',
    detail: "Cycle 2027-01-15 starts 2 cycles after today's (2026-11-15 in Kenya): once uploaded, /v1/prices/latest serves it at once, though it is not in force until 2027-01-15."
  }])
  t.match(cycleWarnings(cycle('2027-11-15', 0), TODAY), [{ kind: 'early', detail: /^Cycle 2027-11-15 starts 12 cycles after today's/ }])
  // 14 December, 21:30 UTC is already the 15th in Nairobi (UTC+3): January is then the next cycle.
  const kenya = { ...TODAY, today: todayInKenya(new Date('2026-12-14T21:30:00Z')) }
  t.equal(kenya.today, '2026-12-15')
  t.strictSame(cycleWarnings(cycle('2027-01-15', 0), kenya), [])
  t.strictSame(cycleWarnings(cycle('2027-01-15', 0), { ...TODAY, today: todayInKenya(new Date('2026-12-14T20:30:00Z')) }).map((w) => w.kind), ['early'], 'an hour earlier')
})

t.test('[D73] both at once: missing towns first, then the early start', async (t) => {
  t.strictSame(cycleWarnings(cycle('2027-01-15', 228, 233, '2026-11-15'), TODAY).map((w) => w.kind), ['missing_towns', 'early'])
})

t.test('[D73] INGEST_MISSING_TOWNS_SHARE: 10% unless set, a share from 0 to 1, anything else says what it allows', async (t) => {
  t.equal(loadConfig({}).ingestMissingTownsShare, 0.1)
  t.equal(loadConfig({ INGEST_MISSING_TOWNS_SHARE: '0.25' }).ingestMissingTownsShare, 0.25)
  t.equal(loadConfig({ INGEST_MISSING_TOWNS_SHARE: '0' }).ingestMissingTownsShare, 0)
  for (const value of ['1.5', '-0.1', '10%']) {
    t.throws(() => loadConfig({ INGEST_MISSING_TOWNS_SHARE: value }),
      new ConfigError(`Invalid environment variable INGEST_MISSING_TOWNS_SHARE=${value === '10%' ? '"10%"' : value}: expected a share from 0 to 1, such as 0.1 for 10%`), value)
  }
})
