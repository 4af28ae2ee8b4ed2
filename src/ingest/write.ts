import { sql } from 'drizzle-orm'
import { pricesChangedChannel } from '../db/channels.js'
import { rowsOf, type Database } from '../db/client.js'
import { copyBatches, transactionClientOf } from '../db/copy.js'
import type { PriceRow } from './csv.js'
import { addCounts, batchSizeOf, outcomeOf, recordBatches, RECORD_COLUMNS, type BatchOptions, type Counts, type IngestOutcome } from './review.js'

/**
 * Validated CSV rows → fuel_prices (spec 4.5 rule 6, D14, D15). No Fastify: the route and
 * `npm run seed` share this one write path. (The dry run's counts: review.ts.)
 */

export interface WriteOptions extends BatchOptions {
  /** The D26 notification's payload, so the ingesting replica can tell its own when it arrives. */
  notifyPayload?: string
}

/** Bound on each statement of an ingest, the wait for the lock included. */
const INGEST_STATEMENT_TIMEOUT_MS = 300_000

/** D14: any fixed 64-bit key, distinct from the migration lock's. */
export const INGEST_LOCK_KEY = 7_305_531_002

/**
 * Upserts the rows in one transaction (D14: all or none).
 * `rows` come from `parseCycleCsv`, which guarantees that no (town, valid_from) repeats (D9);
 * a repeat would make PostgreSQL refuse the batch ("cannot affect row a second time").
 */
export async function writeRows (database: Database, rows: readonly PriceRow[], options: WriteOptions = {}): Promise<IngestOutcome> {
  return await writeBatches(database, [rows], options)
}

/**
 * `writeRows` for rows that are still being validated (`cycleCsvBatches`): on PostgreSQL each
 * batch is sent by COPY while the next is parsed (D46), so the file's validation and the server's
 * work overlap on two cores. An error from `batches` (a 400 of the file) rolls everything back.
 */
export async function writeBatches (database: Database, batches: Iterable<readonly PriceRow[]>, options: WriteOptions = {}): Promise<IngestOutcome> {
  const batchSize = batchSizeOf(options)
  // Every row read so far, batch by batch, for the upsert path and the outcome.
  const read: Array<readonly PriceRow[]> = []
  const source = batches[Symbol.iterator]()
  const reading = (function * (): Generator<readonly PriceRow[]> {
    for (let next = source.next(); next.done !== true; next = source.next()) {
      read.push(next.value)
      yield next.value
    }
  })()
  // The first batch is read before the transaction begins: a file that fails early (a header, a
  // first row, a whole monthly file of 233 rows) costs the database nothing.
  const first = reading.next()
  let all: readonly PriceRow[] | undefined
  /** The rest of the file read, and every row of it. */
  const allRows = (): readonly PriceRow[] => {
    if (all === undefined) {
      for (let next = reading.next(); next.done !== true; next = reading.next());
      all = read.length === 1 ? read[0] as readonly PriceRow[] : read.flat()
    }
    return all
  }
  // PGlite reads the whole file first: only the COPY path overlaps reading and writing, and on
  // PGlite the transaction would hold its one connection while the rest is read.
  if (database.kind !== 'postgres') allRows()

  const counts: Counts = { inserted: 0, updated: 0 }
  await database.db.transaction(async (tx) => {
    // D14: concurrent ingests take turns (held until COMMIT/ROLLBACK), so they never deadlock
    // on each other's rows nor interleave their batches.
    // A large file, or one queued behind others, may take longer than a read's statement
    // timeout: this transaction has its own bounds (set_config(…, true) is SET LOCAL). D47:
    // waiting its turn behind other ingests is a lock wait, with the same bound.
    await tx.execute(sql`SELECT set_config('statement_timeout', ${String(INGEST_STATEMENT_TIMEOUT_MS)}, true),
      set_config('lock_timeout', ${String(INGEST_STATEMENT_TIMEOUT_MS)}, true)`)
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${INGEST_LOCK_KEY}::bigint)`)
    // D46: a file of new records only (the monthly upload, a backfill) is written by COPY's
    // bulk path as it is read. A file that touches a stored (town, valid_from) makes COPY fail
    // on the unique key: back to the savepoint, and the rows are upserted instead.
    if (database.kind === 'postgres' && first.done !== true && await copiedAll(tx, first.value, reading)) {
      counts.inserted = allRows().length
    } else {
      for (const records of recordBatches(allRows(), batchSize)) {
        // Spec 4.5 rule 6: upsert on (town, valid_from), keeping the id (spec 2: "stable once
        // written"). The WHERE leaves identical rows untouched (no new row version, counted as
        // unchanged); xmax = 0 marks a row this statement inserted rather than updated.
        const [batch] = rowsOf<Counts>(await tx.execute(sql`
          WITH upserted AS (
            INSERT INTO fuel_prices AS f (town, valid_from, valid_to, super_petrol, diesel, kerosene)
            SELECT r.town, r.valid_from, r.valid_to, r.super_petrol, r.diesel, r.kerosene
            FROM json_to_recordset(${records}::json) AS r(${RECORD_COLUMNS})
            ON CONFLICT ON CONSTRAINT fuel_prices_town_valid_from_key DO UPDATE
              SET super_petrol = EXCLUDED.super_petrol, diesel = EXCLUDED.diesel, kerosene = EXCLUDED.kerosene
              WHERE (f.super_petrol, f.diesel, f.kerosene) IS DISTINCT FROM (EXCLUDED.super_petrol, EXCLUDED.diesel, EXCLUDED.kerosene)
            RETURNING (f.xmax = 0) AS inserted
          )
          SELECT count(*) FILTER (WHERE inserted)::int AS inserted,
                 count(*) FILTER (WHERE NOT inserted)::int AS updated
          FROM upserted`))
        addCounts(counts, batch)
      }
    }
    // D26: every replica listening on PostgreSQL clears its latest-prices cache; a NOTIFY is
    // delivered at COMMIT and dropped on ROLLBACK. (PGlite has one process: the caller clears.)
    if (database.kind === 'postgres') await tx.execute(sql`SELECT pg_notify(${pricesChangedChannel(database)}, ${options.notifyPayload ?? ''})`)
  })
  return outcomeOf(allRows(), counts)
}

/**
 * D46: COPY of `first` and then of every batch of `rest` as it is read, under a savepoint. False
 * (and rolled back to the savepoint) when a row is already stored; any other error is thrown.
 */
async function copiedAll (tx: { execute: Database['db']['execute'] }, first: readonly PriceRow[], rest: Iterator<readonly PriceRow[]>): Promise<boolean> {
  await tx.execute(sql`SAVEPOINT bulk_copy`)
  try {
    await copyBatches(transactionClientOf(tx), (function * () {
      yield first
      for (let next = rest.next(); next.done !== true; next = rest.next()) yield next.value
    })())
  } catch (err) {
    if (!isStoredKey(err)) throw err
    await tx.execute(sql`ROLLBACK TO SAVEPOINT bulk_copy`)
    return false
  }
  await tx.execute(sql`RELEASE SAVEPOINT bulk_copy`)
  return true
}

/** PostgreSQL's unique_violation on (town, valid_from): the file holds a record already stored. */
function isStoredKey (err: unknown): boolean {
  const { code, constraint_name: constraint } = err as { code?: unknown, constraint_name?: unknown }
  return code === '23505' && constraint === 'fuel_prices_town_valid_from_key'
}
