import { Socket } from 'node:net'
import { Writable } from 'node:stream'
import { sql } from 'drizzle-orm'
import t from 'tap'
import { copyBatches, transactionClientOf } from '../../src/db/postgres/copy.js'
import { packRows, type IngestOutcome, type PriceRow } from '../../src/domain/price-rows.js'
import { writeBatches } from '../../src/db/ingest-write.js'
import { rowCount, storedRows, writeRows } from '../fixtures/ingest.js'
import { postgresOnly, resetData, testDatabase } from '../helper.js'

/**
 * D14/D46 the COPY fast path of an ingest: PostgreSQL only (PGlite ingests by the upsert alone,
 * and its transactions have no postgres.js client to COPY through).
 */

t.beforeEach(resetData)

let line = 1
const row = (town: string, validFrom: string, validTo: string, superPetrol = '180.50'): PriceRow =>
  ({ line: ++line, town, validFrom, validTo, superPetrol, diesel: '170.00', kerosene: '160.25' })

/** A row as test/db/postgres/copy.test.ts writes it straight through COPY. */
const copyRow = (town: string, superPetrol = '180.00'): PriceRow => ({
  line: 2, town, validFrom: '2026-01-15', validTo: '2026-02-14', superPetrol, diesel: '170.00', kerosene: '150.00'
})

const JAN = ['2026-01-15', '2026-02-14'] as const
const FEB = ['2026-02-15', '2026-03-14'] as const

// The COPY fast path relies on two driver internals (src/db/postgres/copy.ts). These tests run them on the
// real drivers, so an upgrade of drizzle-orm or postgres.js that changes them fails here, loudly.
t.test('[D14] the driver internals behind COPY are where src/db/postgres/copy.ts expects them', postgresOnly, async (t) => {
  const database = await testDatabase()
  await database.db.transaction(async (tx) => {
    const client = transactionClientOf(tx)
    t.type(client.unsafe, 'function', 'tx.session.client is postgres.js\'s transaction client')
    await copyBatches(client, [packRows([copyRow('Nairobi'), copyRow('Mombasa')])])
    const [counted] = await client`SELECT count(*)::int AS n FROM fuel_prices`
    t.equal(counted?.n, 2, 'COPY wrote through the transaction client')
    // COPY's text format escapes; D30 keeps such towns out of files, this checks the escaping itself.
    const odd = 'Back\\slash\tTab\nLine\rEnd'
    await copyBatches(client, [packRows([copyRow(odd)])])
    const [stored] = await client`SELECT town FROM fuel_prices WHERE town LIKE 'Back%'`
    t.equal(stored?.town, odd, 'backslash, tab and line breaks arrive as sent')
    // D45: the COPY stream's callbacks are called directly; Node's Writable code sees only sockets.
    const writers: string[] = []
    const { write, end } = Writable.prototype
    Writable.prototype.write = function (this: Writable, ...args: unknown[]) {
      if (!(this instanceof Socket)) writers.push(this.constructor.name)
      return (write as (...a: unknown[]) => boolean).apply(this, args)
    }
    Writable.prototype.end = function (this: Writable, ...args: unknown[]) {
      if (!(this instanceof Socket)) writers.push(this.constructor.name)
      return (end as (...a: unknown[]) => Writable).apply(this, args)
    }
    try {
      await copyBatches(client, [packRows([copyRow('Kisumu'), copyRow('Nakuru')])])
    } finally {
      Object.assign(Writable.prototype, { write, end })
    }
    t.same(writers, [], 'no Writable but a socket was written to or ended')
    const [copied] = await client`SELECT count(*)::int AS n FROM fuel_prices`
    t.equal(copied?.n, 5, 'and the rows arrived')
    tx.rollback()
  }).catch((err: unknown) => { if ((err as Error).message !== 'Rollback') throw err })
  t.equal(await rowCount(), 0, 'rolled back with the transaction')

  // A row the table refuses: postgres.js rejects the query through its `reject` callback, which
  // copyBatches hooks, so the COPY fails at once instead of hanging on a stream that never ends.
  await t.rejects(database.db.transaction(async (tx) => {
    await copyBatches(transactionClientOf(tx), [packRows([copyRow('Nairobi'), copyRow('Kisumu', '0.00')])])
  }), /fuel_prices_prices_check/)
  t.equal(await rowCount(), 0)
  await database.db.execute(sql`SELECT 1`) // the pool is healthy afterwards
})

t.test('[D46] PostgreSQL: new records are written by COPY; a file touching a stored one is upserted after the savepoint; a refused COPY writes nothing and frees the lock', postgresOnly, async (t) => {
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
