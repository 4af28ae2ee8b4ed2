import { sql } from 'drizzle-orm'
import { notifyPricesChanged } from './channels.js'
import { rowsOf, type Database } from './client.js'
import { INGEST_STATEMENT_TIMEOUT_MS, takeIngestLock } from './locks.js'
import { copyBatchesPglite, pgliteTransactionOf } from './pglite-copy.js'
import { copyBatches, transactionClientOf } from './postgres/copy.js'
import { cyclesOfBatches, packed, rowCount, rowsOfBatch, type IngestOutcome, type PriceRow, type RowBatch } from '../domain/price-rows.js'

export interface WriteOptions {
  /** Rows per statement; each batch is one bind parameter, so no file meets PostgreSQL's cap of 65,535 parameters. */
  batchSize?: number
  /** Sent on the change channel at COMMIT: the ingesting replica knows its own notification by it. */
  notifyPayload?: string
  /** How long to wait for the ingest lock before IngestLockBusy (tests shorten it). */
  lockWaitMs?: number
}

interface Counts {
  inserted: number
  updated: number
}

const DEFAULT_BATCH_SIZE = 20_000

// valid_to needs no comparison: the cycle rule (a CHECK constraint) derives it from valid_from.
const RECORD_COLUMNS = sql.raw('town text, valid_from date, valid_to date, super_petrol numeric, diesel numeric, kerosene numeric')

/**
 * All rows or none, one ingest at a time. The batches may still be arriving from the parser: on
 * PostgreSQL each goes into the COPY as it comes, and a refusal met later in the file rolls the
 * transaction back (D46).
 */
export async function writeBatches (database: Database, batches: Iterable<RowBatch> | AsyncIterable<RowBatch>, options: WriteOptions = {}): Promise<IngestOutcome> {
  const batchSize = batchSizeOf(options)
  const read: RowBatch[] = []
  const reading = (async function * (): AsyncGenerator<RowBatch> {
    for await (const batch of batches) {
      read.push(batch)
      yield batch
    }
  })()
  // The first batch is read before the transaction begins, so a file that fails early costs the database nothing.
  const first = await reading.next()
  let readAll = false
  const allBatches = async (): Promise<readonly RowBatch[]> => {
    if (!readAll) {
      for (let next = await reading.next(); next.done !== true; next = await reading.next());
      readAll = true
    }
    return read
  }
  // Only COPY overlaps reading and writing; on PGlite the whole file is read first.
  if (database.kind !== 'postgres') await allBatches()

  const counts: Counts = { inserted: 0, updated: 0 }
  try {
    await database.db.transaction(async (tx) => {
      // It may queue behind another write, then its statements get the ingest's own bound.
      await takeIngestLock(tx, options.lockWaitMs ?? INGEST_STATEMENT_TIMEOUT_MS, INGEST_STATEMENT_TIMEOUT_MS)
      // New records go by COPY; a file that meets a stored record is upserted instead. PostgreSQL's
      // COPY takes the batches as they are read; PGlite has the whole file by now.
      if (first.done !== true && await copyIfAllNew(tx, database.kind, database.kind === 'postgres' ? firstThenRest(first.value, reading) : await allBatches(), batchSize)) {
        counts.inserted = rowCount(await allBatches())
      } else {
        for (const records of recordBatches((await allBatches()).flatMap(rowsOfBatch), batchSize)) {
          // Upsert: a changed record keeps its id (spec 4.5 rule 6); xmax = 0 marks an inserted row.
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
      await notifyPricesChanged(tx, database, options.notifyPayload ?? '')
    })
  } finally {
    // A write that failed before the file's end lets go of its source, so a parser still at work stops.
    if (!readAll) reading.return(undefined).catch(() => {})
  }
  return outcomeOf(await allBatches(), counts)
}

/** False when a row is already stored, which fails the COPY: the savepoint is rolled back and the caller upserts. */
async function copyIfAllNew (tx: { execute: Database['db']['execute'] }, kind: Database['kind'], batches: readonly RowBatch[] | AsyncIterable<RowBatch>, batchSize: number): Promise<boolean> {
  await tx.execute(sql`SAVEPOINT bulk_copy`)
  try {
    if (kind === 'postgres') await copyBatches(transactionClientOf(tx), (async function * () { for await (const batch of batches) yield packed(batch) })())
    else await copyBatchesPglite(pgliteTransactionOf(tx), (function * () { for (const batch of batches as readonly RowBatch[]) yield packed(batch) })(), batchSize)
  } catch (err) {
    if (!isConflictWithStoredRecord(err)) throw err
    await tx.execute(sql`ROLLBACK TO SAVEPOINT bulk_copy`)
    return false
  }
  await tx.execute(sql`RELEASE SAVEPOINT bulk_copy`)
  return true
}

async function * firstThenRest (first: RowBatch, rest: AsyncIterator<RowBatch>): AsyncGenerator<RowBatch> {
  yield first
  for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value
}

function isConflictWithStoredRecord (err: unknown): boolean {
  // postgres.js names the constraint `constraint_name`, PGlite `constraint`.
  const { code, constraint_name: named, constraint } = err as { code?: unknown, constraint_name?: unknown, constraint?: unknown }
  return code === '23505' && (named ?? constraint) === 'fuel_prices_town_valid_from_key'
}

function batchSizeOf (options: WriteOptions): number {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize must be a positive integer')
  return batchSize
}

function * recordBatches (rows: readonly PriceRow[], batchSize: number): Generator<string> {
  for (let i = 0; i < rows.length; i += batchSize) yield recordsJson(rows.slice(i, i + batchSize))
}

function addCounts (total: Counts, batch: Counts | undefined): void {
  total.inserted += batch?.inserted ?? 0
  total.updated += batch?.updated ?? 0
}

function outcomeOf (batches: readonly RowBatch[], { inserted, updated }: Counts): IngestOutcome {
  const rows = rowCount(batches)
  return { recordsProcessed: rows, inserted, updated, unchanged: rows - inserted - updated, cycles: cyclesOfBatches(batches) }
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
