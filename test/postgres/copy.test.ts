import { Socket } from 'node:net'
import { Writable } from 'node:stream'
import { sql } from 'drizzle-orm'
import t from '../support/file-test.js'
import { copyBatches, transactionClientOf } from '../../src/db/postgres/copy.js'
import { packRows, type PriceRow } from '../../src/domain/price-rows.js'
import { rowCount } from '../fixtures/ingest.js'
import { postgresOnly, resetData, testDatabase } from '../helper.js'

/**
 * The COPY of an ingest through postgres.js (D14, D46): PostgreSQL only, as these are the
 * driver's internals. What the writer does with COPY on either database: test/db/ingest-write.
 */

t.beforeEach(resetData)

/** A row as test/db/postgres/copy.test.ts writes it straight through COPY. */
const copyRow = (town: string, superPetrol = '180.00'): PriceRow => ({
  line: 2, town, validFrom: '2026-01-15', validTo: '2026-02-14', superPetrol, diesel: '170.00', kerosene: '150.00'
})

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
