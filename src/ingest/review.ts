import { sql } from 'drizzle-orm'
import type { Cycle } from '../domain/cycle.js'
import { rowsOf, type Database } from '../db/client.js'
import type { PriceRow } from './csv.js'
import { reviewCycles, type CycleReview, type StoredPrice } from './plausibility.js'

/**
 * What a file would do to fuel_prices, without writing (the dry run, D40): the counts an upload
 * would report and the review of its cycles. Also the pieces the write shares with it.
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

export interface BatchOptions {
  /** Rows per statement; each batch travels as ONE bind parameter (D14), so no 65,535 limit. */
  batchSize?: number
}

export interface Counts {
  inserted: number
  updated: number
}

/** 20,000 rows make ~2.5 MB of JSON: a 100,000-row file is five statements. */
const DEFAULT_BATCH_SIZE = 20_000

// valid_to needs no comparison: the cycle rule (D8, a CHECK constraint) derives it from valid_from.
export const RECORD_COLUMNS = sql.raw('town text, valid_from date, valid_to date, super_petrol numeric, diesel numeric, kerosene numeric')

/**
 * The dry run's counts: what `writeBatches` would report for `rows`, from one snapshot of the
 * table (every batch sees the same state), with nothing written.
 */
export async function countRows (database: Database, rows: readonly PriceRow[], options: BatchOptions = {}): Promise<IngestOutcome> {
  const batchSize = batchSizeOf(options)
  const counts: Counts = { inserted: 0, updated: 0 }
  await database.db.transaction(async (tx) => {
    for (const records of recordBatches(rows, batchSize)) {
      const [batch] = rowsOf<Counts>(await tx.execute(sql`
        SELECT count(*) FILTER (WHERE f.id IS NULL)::int AS inserted,
               count(*) FILTER (WHERE f.id IS NOT NULL
                 AND (f.super_petrol, f.diesel, f.kerosene) IS DISTINCT FROM (r.super_petrol, r.diesel, r.kerosene))::int AS updated
        FROM json_to_recordset(${records}::json) AS r(${RECORD_COLUMNS})
        LEFT JOIN fuel_prices AS f ON f.town = r.town AND f.valid_from = r.valid_from`))
      addCounts(counts, batch)
    }
  }, { isolationLevel: 'repeatable read', accessMode: 'read only' })
  return outcomeOf(rows, counts)
}

/** The batch size of `options`, checked: a positive integer. */
export function batchSizeOf (options: BatchOptions): number {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize must be a positive integer')
  return batchSize
}

/** `rows` as the JSON text of each statement's batch, built as the statement needs it. */
export function * recordBatches (rows: readonly PriceRow[], batchSize: number): Generator<string> {
  for (let i = 0; i < rows.length; i += batchSize) yield recordsJson(rows.slice(i, i + batchSize))
}

export function addCounts (total: Counts, batch: Counts | undefined): void {
  total.inserted += batch?.inserted ?? 0
  total.updated += batch?.updated ?? 0
}

export function outcomeOf (rows: readonly PriceRow[], { inserted, updated }: Counts): IngestOutcome {
  return { recordsProcessed: rows.length, inserted, updated, unchanged: rows.length - inserted - updated, cycles: cyclesOf(rows) }
}

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
