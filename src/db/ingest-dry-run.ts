import { sql } from 'drizzle-orm'
import { rowsOf, type Database } from './client.js'
import { cyclesOf, type IngestOutcome, type PriceRow, type StoredPrice } from '../domain/price-rows.js'

// The dry run's SQL, and the batching the write shares.

export interface BatchOptions {
  /** Rows per statement; each batch is one bind parameter, so no file meets PostgreSQL's cap of 65,535 parameters. */
  batchSize?: number
}

export interface Counts {
  inserted: number
  updated: number
}

const DEFAULT_BATCH_SIZE = 20_000

// valid_to needs no comparison: the cycle rule (a CHECK constraint) derives it from valid_from.
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

/** The stored records of the file's cycles and of the latest cycle before each, for the review. */
export async function storedForReview (database: Database, rows: readonly PriceRow[]): Promise<StoredPrice[]> {
  const dates = JSON.stringify([...new Set(rows.map((r) => r.validFrom))])
  return rowsOf<StoredPrice>(await database.db.execute(sql`
    SELECT valid_from::text AS "validFrom", town, super_petrol::text AS "superPetrol", diesel::text AS diesel, kerosene::text AS kerosene
    FROM fuel_prices
    WHERE valid_from IN (
      SELECT d.value::date FROM json_array_elements_text(${dates}::json) AS d
      UNION
      SELECT (SELECT max(valid_from) FROM fuel_prices WHERE valid_from < d.value::date) FROM json_array_elements_text(${dates}::json) AS d
    )`))
}
