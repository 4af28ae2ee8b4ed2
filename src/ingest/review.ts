import { sql } from 'drizzle-orm'
import type { Cycle } from '../domain/cycle.js'
import { rowsOf, type Database } from '../db/client.js'
import type { PriceRow } from './csv.js'
import { reviewCycles, type CycleReview, type StoredPrice } from './plausibility.js'

/** The dry run (D40): what a file would do to fuel_prices; also the pieces the write shares. */

export interface IngestOutcome {
  /** D15: data rows of the file; inserted + updated + unchanged. */
  recordsProcessed: number
  inserted: number
  /** Rows whose prices changed an existing (town, valid_from); their ids are kept. */
  updated: number
  unchanged: number
  cycles: Cycle[]
}

export interface BatchOptions {
  /** Rows per statement; each batch is one bind parameter (D14 parameter cap). */
  batchSize?: number
}

export interface Counts {
  inserted: number
  updated: number
}

const DEFAULT_BATCH_SIZE = 20_000

// valid_to needs no comparison: the cycle rule (D8, a CHECK constraint) derives it from valid_from.
export const RECORD_COLUMNS = sql.raw('town text, valid_from date, valid_to date, super_petrol numeric, diesel numeric, kerosene numeric')

/** What `writeBatches` would report, from one snapshot of the table, with nothing written. */
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

export function batchSizeOf (options: BatchOptions): number {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize must be a positive integer')
  return batchSize
}

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

/** One bind parameter per batch; prices stay the file's decimal strings, never a float. */
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
 * D40 plausibility review: each cycle of the file against the cycle stored before it, with the
 * counts `countRows` would give, from the same one read of what is stored (D57).
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
  return await reviewCycles(rows, stored, share)
}
