import t from '../support/file-test.js'
import { cyclesOf, type IngestOutcome, type PriceRow } from '../../src/domain/price-rows.js'
import { writeBatches } from '../../src/db/ingest-write.js'
import { IngestRejected } from '../../src/domain/errors.js'
import { cycleCsvBatches } from '../../src/ingest/csv.js'
import { build, resetData, testDatabase } from '../helper.js'
import { HEADER, TOKEN, csv, rowCount, storedRows, upload, writeRows } from '../fixtures/ingest.js'

/** The ingest's write without Fastify (writeBatches, writeRows its one-piece form): the route's and `npm run seed`'s; the dry run through its route. */

t.beforeEach(resetData)

let line = 1
const row = (town: string, validFrom: string, validTo: string, superPetrol = '180.50'): PriceRow =>
  ({ line: ++line, town, validFrom, validTo, superPetrol, diesel: '170.00', kerosene: '160.25' })

const JAN = ['2026-01-15', '2026-02-14'] as const
const FEB = ['2026-02-15', '2026-03-14'] as const

/** The rows as a CSV file the upload routes take (dates DD-MM-YYYY). */
const csvOf = (rows: readonly PriceRow[]): string => {
  const date = (iso: string): string => iso.split('-').reverse().join('-')
  return csv(HEADER, ...rows.map((r) => [date(r.validFrom), date(r.validTo), r.town, r.superPetrol, r.diesel, r.kerosene].join(',')))
}

t.test('[D14, D15] batches of any size give the same counts and rows', async (t) => {
  const database = await testDatabase()
  const rows = ['A', 'B', 'C', 'D', 'E'].map((town) => row(town, ...JAN))
  t.strictSame(await writeRows(database, rows, { batchSize: 2 }), {
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
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const dryRun = (await upload(app, csvOf(changed), { query: '/dry-run' })).json()
  t.strictSame({
    recordsProcessed: dryRun.records_processed,
    inserted: dryRun.inserted,
    updated: dryRun.updated,
    unchanged: dryRun.unchanged,
    cycles: dryRun.cycles.map((c: { valid_from: string, valid_to: string }) => ({ validFrom: c.valid_from, validTo: c.valid_to }))
  }, expected, 'dry run')
  t.equal(await rowCount(), 5)
  t.strictSame(await writeRows(database, changed, { batchSize: 3 }), expected, 'the real thing, two batches')
  t.strictSame((await storedRows()).map((r) => [r.town, r.valid_from, r.super_petrol]), [
    ['A', '2026-01-15', '181.00'], ['B', '2026-01-15', '180.50'], ['C', '2026-01-15', '180.50'],
    ['D', '2026-01-15', '180.50'], ['E', '2026-01-15', '1.00'], ['F', '2026-02-15', '180.50']
  ])
})

t.test('[D14] one transaction: a failure in a later batch leaves no row of the earlier ones', async (t) => {
  const database = await testDatabase()
  await writeRows(database, [row('A', ...JAN)])
  const before = await storedRows()
  // Rows that bypassed the parser: the table's CHECK (prices > 0) refuses the third batch.
  const rows = [row('A', ...JAN, '199.00'), row('B', ...JAN), row('C', ...JAN), row('D', ...JAN), row('E', ...JAN, '0.00')]
  await t.rejects(writeRows(database, rows, { batchSize: 2 }))
  t.strictSame(await storedRows(), before)
})

t.test('[D14] prices reach numeric(6,2) exactly, odd town names intact', async (t) => {
  const database = await testDatabase()
  const towns = ["Murang'a", 'Ruiru, Juja', 'Quote "Town"', 'Back\\slash', 'Ñairobi 🚗']
  await writeRows(database, towns.map((town, i) => row(town, ...JAN, `${9999 - i}.9${i}`)))
  t.strictSame((await storedRows()).map((r) => [r.town, r.super_petrol]).sort(), towns.map((town, i) => [town, `${9999 - i}.9${i}`]).sort())
})

t.test('an empty list is a no-op, a bad batch size a RangeError', async (t) => {
  const database = await testDatabase()
  t.strictSame(await writeRows(database, []), { recordsProcessed: 0, inserted: 0, updated: 0, unchanged: 0, cycles: [] })
  await t.rejects(writeRows(database, [row('A', ...JAN)], { batchSize: 0 }), RangeError)
})

t.test('cyclesOf: distinct, newest first', async (t) => {
  t.strictSame(cyclesOf([row('A', ...JAN), row('A', ...FEB), row('B', ...JAN), row('C', '2025-12-15', '2026-01-14')]), [
    { validFrom: '2026-02-15', validTo: '2026-03-14' },
    { validFrom: '2026-01-15', validTo: '2026-02-14' },
    { validFrom: '2025-12-15', validTo: '2026-01-14' }
  ])
})

t.test('[D46] rows are written as they are read: an error of the file after the first batch rolls back what was sent', async (t) => {
  const database = await testDatabase()
  await writeRows(database, [row('A', ...JAN)])
  const before = await storedRows()
  const refusal = new IngestRejected('Invalid price value: abc')
  let sent = 0
  const seen: string[] = []
  if ('onStatement' in database) database.onStatement = (text) => { seen.push(text.trim().split(/\s+/)[0]?.toUpperCase() ?? '') }
  t.teardown(() => { if ('onStatement' in database) database.onStatement = undefined })
  const batches = function * (): Generator<PriceRow[]> {
    yield [row('B', ...FEB), row('C', ...FEB)]
    sent++
    yield [row('D', ...FEB)]
    sent++
    throw refusal
  }
  await t.rejects(writeBatches(database, batches()), refusal, 'the file\'s own error, not the aborted COPY\'s')
  t.equal(sent, 2, 'both batches were read before the error')
  if (database.kind === 'postgres') t.ok(seen.includes('COPY'), `the COPY had begun: ${seen.join(' ')}`)
  t.strictSame(await storedRows(), before, 'nothing of the file was stored')
  // The connection and the ingest lock are free: the next ingest proceeds.
  t.strictSame(await writeBatches(database, [[row('B', ...FEB)], [row('C', ...FEB)]]), {
    recordsProcessed: 2, inserted: 2, updated: 0, unchanged: 0, cycles: [{ validFrom: '2026-02-15', validTo: '2026-03-14' }]
  })
  // An error in the first batch is found before the transaction begins.
  seen.length = 0
  const failsAtOnce: Iterable<PriceRow[]> = { [Symbol.iterator]: () => ({ next: () => { throw refusal } }) }
  await t.rejects(writeBatches(database, failsAtOnce), refusal)
  t.strictSame(seen, [], 'no statement for a file that fails in its first batch')
})

t.test('[D46] batches still arriving: a write the database refuses lets go of its source, and keeps nothing', async (t) => {
  const database = await testDatabase()
  const before = await storedRows()
  let pulled = 0
  let closed = false
  // Not a cycle's dates: the table's CHECK refuses the first row. On PostgreSQL the COPY takes the
  // batches as they come, so the source never ends; PGlite reads the whole file first.
  const endless = database.kind === 'postgres'
  const source = async function * (): AsyncGenerator<PriceRow[]> {
    try {
      yield [row('Bad', '2026-02-16', '2026-03-15')]
      for (let i = 0; endless || i < 3; i++) {
        pulled++
        yield [row(`Town ${i}`, ...FEB)]
      }
    } finally {
      closed = true
    }
  }
  await t.rejects(writeBatches(database, source()), { code: '23514' })
  t.ok(closed, 'the source was closed')
  if (!endless) t.equal(pulled, 3, 'PGlite read the whole file before writing')
  t.strictSame(await storedRows(), before, 'nothing of the file was stored')
})

t.test('[D46] a real file read in small pieces: the same rows as in one piece, its error rolls back', async (t) => {
  const database = await testDatabase()
  const lines = ['From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)']
  for (let i = 0; i < 300; i++) lines.push(`15-01-2026,14-02-2026,Town ${i},${100 + i}.50,170.00,160.25`)
  const text = lines.join('\n')
  t.strictSame(await writeBatches(database, cycleCsvBatches(text, 256)), {
    recordsProcessed: 300, inserted: 300, updated: 0, unchanged: 0, cycles: [{ validFrom: '2026-01-15', validTo: '2026-02-14' }]
  })
  const stored = await storedRows()
  t.equal(stored.length, 300)
  t.strictSame(stored.find((r) => r.town === 'Town 299'), { ...stored.find((r) => r.town === 'Town 299'), super_petrol: '399.50', valid_to: '2026-02-14' })
  await resetData()
  const bad = text + '\n15-01-2026,14-02-2026,Town 7,1.00,1.00,1.00'
  await t.rejects(writeBatches(database, cycleCsvBatches(bad, 256)), { name: 'IngestRejected', message: 'Duplicate row for Town 7 from 2026-01-15 on lines 9 and 302' })
  t.equal(await rowCount(), 0)
})

t.test('[D46] new records are written by COPY; a file touching a stored one is upserted after the savepoint; a refused COPY writes nothing and frees the lock', async (t) => {
  const database = await testDatabase()
  const statementsOf = async (batches: Array<readonly PriceRow[]>): Promise<{ outcome: IngestOutcome, seen: string[] }> => {
    const seen: string[] = []
    database.onStatement = (text) => { seen.push(text.trim().split(/\s+/).slice(0, 2).join(' ').toUpperCase()) }
    try {
      return { outcome: await writeBatches(database, batches), seen }
    } finally { database.onStatement = undefined }
  }
  const fresh = await statementsOf([[row('A', ...JAN), row('B', ...JAN)]])
  t.strictSame(fresh.seen.filter((s) => /^(SAVEPOINT|COPY|ROLLBACK|RELEASE|WITH)/.test(s)), ['SAVEPOINT BULK_COPY', 'COPY FUEL_PRICES', 'RELEASE SAVEPOINT'], 'new cycle copied, no upsert')
  t.strictSame(fresh.outcome, { recordsProcessed: 2, inserted: 2, updated: 0, unchanged: 0, cycles: [{ validFrom: '2026-01-15', validTo: '2026-02-14' }] })
  const [a] = await storedRows()

  // New records in the first batch, a stored one in the last: COPY is refused on the unique key,
  // the transaction goes back to the savepoint and upserts every row.
  const overlapping = await statementsOf([[row('C', ...FEB), row('D', ...FEB)], [row('E', ...FEB)], [row('A', ...JAN, '181.00'), row('B', ...JAN)]])
  t.strictSame(overlapping.seen.filter((s) => /^(SAVEPOINT|COPY|ROLLBACK|RELEASE|WITH)/.test(s)), ['SAVEPOINT BULK_COPY', 'COPY FUEL_PRICES', 'ROLLBACK TO', 'WITH UPSERTED'])
  t.strictSame(overlapping.outcome, {
    recordsProcessed: 5,
    inserted: 3,
    updated: 1,
    unchanged: 1,
    cycles: [{ validFrom: '2026-02-15', validTo: '2026-03-14' }, { validFrom: '2026-01-15', validTo: '2026-02-14' }]
  })
  const stored = await storedRows()
  t.strictSame(stored.map((r) => [r.town, r.valid_from, r.super_petrol]), [
    ['A', '2026-01-15', '181.00'], ['B', '2026-01-15', '180.50'], ['C', '2026-02-15', '180.50'], ['D', '2026-02-15', '180.50'], ['E', '2026-02-15', '180.50']
  ])
  t.equal(stored[0]?.id, a?.id, 'the updated record keeps its id (spec 2)')

  // A row the table's CHECK refuses, in a file of new cycles only (writeRows trusts its
  // caller; the route never passes such a row): rejected at once, not hung on the stream.
  const marApr = ['2026-03-15', '2026-04-14'] as const
  await t.rejects(writeRows(database, [row('A', ...marApr), row('B', ...marApr, '0.00')]), /fuel_prices_prices_check/)
  t.equal(await rowCount(), 5, 'nothing of the refused file was written')
  // The advisory lock went with the rolled-back transaction: the next ingest proceeds.
  const next = await writeRows(database, [row('A', ...marApr)])
  t.equal(next.inserted, 1)
  t.equal(await rowCount(), 6)
})
