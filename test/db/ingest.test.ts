import t from 'tap'
import type { PriceRow } from '../../src/ingest/csv.js'
import { cyclesOf, ingestRows } from '../../src/db/ingest.js'
import { pricesChangedChannel } from '../../src/db/channels.js'
import { resetData, testDatabase } from '../helper.js'
import { rowCount, storedRows } from '../fixtures/ingest.js'

/** ingestRows without Fastify: the one write path of the route and `npm run seed`. */

t.beforeEach(resetData)

let line = 1
const row = (town: string, validFrom: string, validTo: string, superPetrol = '180.50'): PriceRow =>
  ({ line: ++line, town, validFrom, validTo, superPetrol, diesel: '170.00', kerosene: '160.25' })

const JAN = ['2026-01-15', '2026-02-14'] as const
const FEB = ['2026-02-15', '2026-03-14'] as const

t.test('[D14, D15] batches of any size give the same counts and rows', async (t) => {
  const database = await testDatabase()
  const rows = ['A', 'B', 'C', 'D', 'E'].map((town) => row(town, ...JAN))
  t.strictSame(await ingestRows(database, rows, { batchSize: 2 }), {
    recordsProcessed: 5, inserted: 5, updated: 0, unchanged: 0, cycles: [{ validFrom: '2026-01-15', validTo: '2026-02-14' }]
  })
  const changed = [row('A', ...JAN, '181.00'), row('B', ...JAN), row('F', ...FEB), row('E', ...JAN, '1.00'), row('C', ...JAN)]
  const expected = {
    recordsProcessed: 5,
    inserted: 1,
    updated: 2,
    unchanged: 2,
    cycles: [{ validFrom: '2026-02-15', validTo: '2026-03-14' }, { validFrom: '2026-01-15', validTo: '2026-02-14' }]
  }
  t.strictSame(await ingestRows(database, changed, { dryRun: true, batchSize: 2 }), expected, 'dry run, three batches')
  t.equal(await rowCount(), 5)
  t.strictSame(await ingestRows(database, changed, { batchSize: 3 }), expected, 'the real thing, two batches')
  t.strictSame((await storedRows()).map((r) => [r.town, r.valid_from, r.super_petrol]), [
    ['A', '2026-01-15', '181.00'], ['B', '2026-01-15', '180.50'], ['C', '2026-01-15', '180.50'],
    ['D', '2026-01-15', '180.50'], ['E', '2026-01-15', '1.00'], ['F', '2026-02-15', '180.50']
  ])
})

t.test('[D14] one transaction: a failure in a later batch leaves no row of the earlier ones', async (t) => {
  const database = await testDatabase()
  await ingestRows(database, [row('A', ...JAN)])
  const before = await storedRows()
  // Rows that bypassed the parser: the table's CHECK (prices > 0) refuses the third batch.
  const rows = [row('A', ...JAN, '199.00'), row('B', ...JAN), row('C', ...JAN), row('D', ...JAN), row('E', ...JAN, '0.00')]
  await t.rejects(ingestRows(database, rows, { batchSize: 2 }))
  t.strictSame(await storedRows(), before)
})

t.test('[D14] the batch travels as one parameter: prices reach numeric(6,2) exactly, odd town names intact', async (t) => {
  const database = await testDatabase()
  const towns = ["Murang'a", 'Ruiru, Juja', 'Quote "Town"', 'Back\\slash', 'Ñairobi 🚗']
  await ingestRows(database, towns.map((town, i) => row(town, ...JAN, `${9999 - i}.9${i}`)))
  t.strictSame((await storedRows()).map((r) => [r.town, r.super_petrol]).sort(), towns.map((town, i) => [town, `${9999 - i}.9${i}`]).sort())
})

t.test('an empty list is a no-op, a bad batch size a RangeError', async (t) => {
  const database = await testDatabase()
  t.strictSame(await ingestRows(database, []), { recordsProcessed: 0, inserted: 0, updated: 0, unchanged: 0, cycles: [] })
  await t.rejects(ingestRows(database, [row('A', ...JAN)], { batchSize: 0 }), RangeError)
})

t.test('[D26] on PostgreSQL a committed ingest notifies the replicas; a rolled-back or dry one does not', async (t) => {
  const database = await testDatabase()
  if (database.sql === undefined) {
    t.pass('PGlite: one process, the route clears its own cache')
    return
  }
  const heard: string[] = []
  const subscription = await database.sql.listen(pricesChangedChannel(database), (payload) => { heard.push(payload) })
  t.teardown(async () => { await subscription.unlisten() })
  const settle = async () => { await new Promise((resolve) => setTimeout(resolve, 200)) }

  await ingestRows(database, [row('A', ...JAN)], { dryRun: true })
  await t.rejects(ingestRows(database, [row('A', ...JAN), row('B', ...JAN, '0.00')]))
  await settle()
  t.strictSame(heard, [], 'nothing committed, nothing heard')
  await ingestRows(database, [row('A', ...JAN)])
  await settle()
  t.strictSame(heard, [''])
})

t.test('cyclesOf: distinct, newest first', async (t) => {
  t.strictSame(cyclesOf([row('A', ...JAN), row('A', ...FEB), row('B', ...JAN), row('C', '2025-12-15', '2026-01-14')]), [
    { validFrom: '2026-02-15', validTo: '2026-03-14' },
    { validFrom: '2026-01-15', validTo: '2026-02-14' },
    { validFrom: '2025-12-15', validTo: '2026-01-14' }
  ])
})

t.test('[D14] PostgreSQL: all-new cycles are written by COPY, overlapping ones upserted; a refused COPY writes nothing and frees the lock', async (t) => {
  const database = await testDatabase()
  if (database.sql === undefined) {
    t.pass('PGlite: every ingest is the upsert')
    return
  }
  await resetData()
  const statementsOf = async (rows: PriceRow[]): Promise<string[]> => {
    const seen: string[] = []
    database.onStatement = (text) => { seen.push(text.trim().split(/\s+/)[0]?.toUpperCase() ?? '') }
    try { await ingestRows(database, rows) } finally { database.onStatement = undefined }
    return seen
  }
  const fresh = await statementsOf([row('A', ...JAN), row('B', ...JAN)])
  t.ok(fresh.includes('COPY'), `new cycle copied: ${fresh.join(' ')}`)
  t.notOk(fresh.includes('WITH'), 'no upsert')
  const overlapping = await statementsOf([row('A', ...JAN, '181.00'), row('C', ...FEB)])
  t.notOk(overlapping.includes('COPY'), `a stored cycle is upserted: ${overlapping.join(' ')}`)
  t.equal(await rowCount(), 3)

  // A row the table's CHECK refuses, in a file of new cycles only (ingestRows trusts its
  // caller; the route never passes such a row): rejected at once, not hung on the stream.
  const marApr = ['2026-03-15', '2026-04-14'] as const
  await t.rejects(ingestRows(database, [row('A', ...marApr), row('B', ...marApr, '0.00')]), /fuel_prices_prices_check/)
  t.equal(await rowCount(), 3, 'nothing of the refused file was written')
  // The advisory lock went with the rolled-back transaction: the next ingest proceeds.
  const next = await ingestRows(database, [row('A', ...marApr)])
  t.equal(next.inserted, 1)
  t.equal(await rowCount(), 4)
})
