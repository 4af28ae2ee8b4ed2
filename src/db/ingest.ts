import { sql } from 'drizzle-orm'
import type { Cycle } from '../domain/cycle.js'
import type { PriceRow } from '../ingest/csv.js'
import { reviewCycles, type CycleReview, type StoredPrice } from '../ingest/plausibility.js'
import { pricesChangedChannel } from './channels.js'
import { rowsOf, type Database } from './client.js'
import { copyBatches, transactionClientOf } from './copy.js'

/**
 * Validated CSV rows → fuel_prices (spec 4.5 rule 6, D14, D15), or, for a dry run, what that
 * would do. No Fastify: the route and `npm run seed` share this one ingest path.
 */

export interface IngestOutcome {
  /** D15: data rows of the file; inserted + updated + unchanged. */
  recordsProcessed: number
  inserted: number
  /** Rows whose prices changed an existing (town, valid_from); their ids are kept. */
  updated: number
  /** Rows identical to what was stored, left untouched. */
  unchanged: number
  /** The cycles the rows touch, distinct, newest first. */
  cycles: Cycle[]
}

export interface IngestOptions {
  /** Count against what is stored, write nothing. */
  dryRun?: boolean
  /** Rows per statement; each batch travels as ONE bind parameter (D14), so no 65,535 limit. */
  batchSize?: number
  /** The D26 notification's payload, so the ingesting replica can tell its own when it arrives. */
  notifyPayload?: string
}

/** 20,000 rows make ~2.5 MB of JSON: a 100,000-row file is five statements. */
const DEFAULT_BATCH_SIZE = 20_000

/** Bound on each statement of an ingest, the wait for the lock included. */
const INGEST_STATEMENT_TIMEOUT_MS = 300_000

/** D14: any fixed 64-bit key, distinct from the migration lock's. */
export const INGEST_LOCK_KEY = 7_305_531_002

/**
 * Upserts the rows in one transaction (D14: all or none), or counts them for a dry run.
 * `rows` come from `parseCycleCsv`, which guarantees that no (town, valid_from) repeats (D9);
 * a repeat would make PostgreSQL refuse the batch ("cannot affect row a second time").
 */
export async function ingestRows (database: Database, rows: readonly PriceRow[], options: IngestOptions = {}): Promise<IngestOutcome> {
  return await ingestBatches(database, [rows], options)
}

/**
 * `ingestRows` for rows that are still being validated (`cycleCsvBatches`): on PostgreSQL each
 * batch is sent by COPY while the next is parsed (D46), so the file's validation and the server's
 * work overlap on two cores. An error from `batches` (a 400 of the file) rolls everything back.
 */
export async function ingestBatches (database: Database, batches: Iterable<readonly PriceRow[]>, options: IngestOptions = {}): Promise<IngestOutcome> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize must be a positive integer')
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
  // PGlite and the dry run read the whole file first: only the COPY path overlaps reading and
  // writing, and on PGlite the transaction would hold its one connection while the rest is read.
  if (database.kind !== 'postgres' || options.dryRun === true) allRows()
  // Built when a statement needs them (not on the COPY path below).
  const statements = function * (rows: readonly PriceRow[]): Generator<string> {
    for (let i = 0; i < rows.length; i += batchSize) yield recordsJson(rows.slice(i, i + batchSize))
  }

  let inserted = 0
  let updated = 0
  if (options.dryRun === true) {
    const rows = allRows()
    // One snapshot for every batch, so the counts describe one state of the table.
    await database.db.transaction(async (tx) => {
      for (const records of statements(rows)) {
        const [counts] = rowsOf<Counts>(await tx.execute(sql`
          SELECT count(*) FILTER (WHERE f.id IS NULL)::int AS inserted,
                 count(*) FILTER (WHERE f.id IS NOT NULL
                   AND (f.super_petrol, f.diesel, f.kerosene) IS DISTINCT FROM (r.super_petrol, r.diesel, r.kerosene))::int AS updated
          FROM json_to_recordset(${records}::json) AS r(${RECORD_COLUMNS})
          LEFT JOIN fuel_prices AS f ON f.town = r.town AND f.valid_from = r.valid_from`))
        inserted += counts?.inserted ?? 0
        updated += counts?.updated ?? 0
      }
    }, { isolationLevel: 'repeatable read', accessMode: 'read only' })
  } else {
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
        inserted = allRows().length
      } else {
        for (const records of statements(allRows())) {
          // Spec 4.5 rule 6: upsert on (town, valid_from), keeping the id (spec 2: "stable once
          // written"). The WHERE leaves identical rows untouched (no new row version, counted as
          // unchanged); xmax = 0 marks a row this statement inserted rather than updated.
          const [counts] = rowsOf<Counts>(await tx.execute(sql`
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
          inserted += counts?.inserted ?? 0
          updated += counts?.updated ?? 0
        }
      }
      // D26: every replica listening on PostgreSQL clears its latest-prices cache; a NOTIFY is
      // delivered at COMMIT and dropped on ROLLBACK. (PGlite has one process: the caller clears.)
      if (database.kind === 'postgres') await tx.execute(sql`SELECT pg_notify(${pricesChangedChannel(database)}, ${options.notifyPayload ?? ''})`)
    })
  }

  const rows = allRows()
  return {
    recordsProcessed: rows.length,
    inserted,
    updated,
    unchanged: rows.length - inserted - updated,
    cycles: cyclesOf(rows)
  }
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

interface Counts {
  inserted: number
  updated: number
}

// valid_to needs no comparison: the cycle rule (D8, a CHECK constraint) derives it from valid_from.
const RECORD_COLUMNS = sql.raw('town text, valid_from date, valid_to date, super_petrol numeric, diesel numeric, kerosene numeric')

/**
 * One batch as JSON text: a single bind parameter, parsed server-side by json_to_recordset. (A JS
 * array in Drizzle's `sql` template would become one parameter per element.) Prices stay the
 * exact decimal strings of the file, so numeric(6,2) receives them without a float in between.
 */
function recordsJson (rows: readonly PriceRow[]): string {
  return JSON.stringify(rows.map((r) => ({
    town: r.town,
    valid_from: r.validFrom,
    valid_to: r.validTo,
    super_petrol: r.superPetrol,
    diesel: r.diesel,
    kerosene: r.kerosene
  })))
}

/** Distinct cycles, newest first (YYYY-MM-DD strings sort as dates). */
export function cyclesOf (rows: readonly PriceRow[]): Cycle[] {
  const byFrom = new Map<string, string>()
  for (const row of rows) byFrom.set(row.validFrom, row.validTo)
  return [...byFrom].sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0)).map(([validFrom, validTo]) => ({ validFrom, validTo }))
}

/**
 * D40: the dry run's review of a file: each of its cycles compared with the cycle before it, from
 * the stored records of the file's cycles and of the cycle stored before each (one statement).
 * `share` is the move that earns a price a warning (0.15 = 15 %).
 */
export async function reviewRows (database: Database, rows: readonly PriceRow[], share: number): Promise<CycleReview[]> {
  const dates = JSON.stringify([...new Set(rows.map((r) => r.validFrom))])
  const stored = rowsOf<StoredPrice>(await database.db.execute(sql`
    SELECT valid_from::text AS "validFrom", town, super_petrol::text AS "superPetrol", diesel::text AS diesel, kerosene::text AS kerosene
    FROM fuel_prices
    WHERE valid_from IN (
      SELECT d.value::date FROM json_array_elements_text(${dates}::json) AS d
      UNION
      SELECT (SELECT max(valid_from) FROM fuel_prices WHERE valid_from < d.value::date) FROM json_array_elements_text(${dates}::json) AS d
    )`))
  return reviewCycles(rows, stored, share)
}
