import { and, asc, desc, eq, gte, lt, lte, or, sql, type SQL } from 'drizzle-orm'
import { FuelPrice as FuelPriceSchema, type FuelPrice } from '../generated/openapi.js'
import { rowsOf, type AppDb, type Database } from './client.js'
import { inFieldOrder } from './field-order.js'
import type { IngestOutcome, PriceRow, RowBatch, StoredPrice } from '../domain/price-rows.js'
import { storedForReview } from './ingest-dry-run.js'
import { writeBatches, type WriteOptions } from './ingest-write.js'
import { fuelPrices, townOrder } from './schema.js'

export interface PriceFilter {
  /** The canonical form (townFilter); compared by lower() on both sides. */
  town?: string | undefined
  startDate?: string | undefined
  endDate?: string | undefined
  limit: number
  offset: number
}

interface PriceStreamFilter extends Omit<PriceFilter, 'limit'> {
  limit?: number | undefined
}

/** The latest cycle as each town's record in FuelPrice JSON, in the answer's order. */
export type LatestRecords = Array<{ town: string, json: string }>

/** Rows per query of an export: one round trip per batch, one batch in memory at a time. */
const EXPORT_BATCH_SIZE = 1000

const townOrderKey = townOrder(fuelPrices.town)

// One total order, so offset pages never skip or repeat a row (D2).
const listOrder = [desc(fuelPrices.validFrom), townOrderKey, asc(fuelPrices.id)]

/** How each FuelPrice field is read: numeric(6,2) prices as float8, so they leave as JSON numbers. */
const FUEL_PRICE_FIELDS = {
  id: fuelPrices.id,
  town: fuelPrices.town,
  super_petrol: sql<number>`${fuelPrices.superPetrol}::float8`.as('super_petrol'),
  diesel: sql<number>`${fuelPrices.diesel}::float8`.as('diesel'),
  kerosene: sql<number>`${fuelPrices.kerosene}::float8`.as('kerosene'),
  valid_from: fuelPrices.validFrom,
  valid_to: fuelPrices.validTo
} satisfies Record<keyof FuelPrice, unknown>

/** In the schema's field order: every FuelPrice answer is `row_to_json` of a row selected with it. */
const fuelPriceColumns = inFieldOrder(FuelPriceSchema, FUEL_PRICE_FIELDS)

/** A subquery of FuelPrice rows aliased `p` as its JSON text, compact and in the contract's field order. */
const FUEL_PRICE_JSON = sql<string>`row_to_json(p)::text`

/** Reads and writes of fuel_prices; each /v1/prices filter shape is one prepared statement. */
export class PricesRepository {
  private readonly listStatements = new Map<number, ReturnType<PricesRepository['prepareList']>>()
  private readonly latestStatement
  private readonly townsStatement
  private readonly db: AppDb

  constructor (private readonly database: Database) {
    const db = this.db = database.db
    // The latest cycle is the highest valid_from in the table, not the calendar's cycle (D1).
    const latest = db.select(fuelPriceColumns).from(fuelPrices)
      .where(eq(fuelPrices.validFrom, sql`(SELECT max(${fuelPrices.validFrom}) FROM ${fuelPrices})`))
      .as('p')
    this.latestStatement = db.select({ town: latest.town, json: FUEL_PRICE_JSON }).from(latest)
      .orderBy(townOrder(latest.town), asc(latest.id))
      .prepare('latest_prices')
    // In town order, by a skip scan over fuel_prices_town_order_idx: one index probe per distinct town.
    this.townsStatement = {
      execute: async (): Promise<string[]> => {
        const result = await db.execute<{ town: string }>(sql`
          WITH RECURSIVE towns AS (
            (SELECT ${townOrder('town')} AS key, town FROM fuel_prices ORDER BY 1 LIMIT 1)
            UNION ALL
            SELECT next.key, next.town FROM towns, LATERAL (
              SELECT ${townOrder('town')} AS key, town FROM fuel_prices
              WHERE ${townOrder('town')} > towns.key ORDER BY 1 LIMIT 1
            ) AS next
          )
          SELECT town FROM towns`)
        return rowsOf<{ town: string }>(result).map((r) => r.town)
      }
    }
  }

  /** A GET /v1/prices page as its JSON body, built by PostgreSQL as one text value. */
  async listPrices (filter: PriceFilter): Promise<string> {
    const mask = (filter.town !== undefined ? 1 : 0) | (filter.startDate !== undefined ? 2 : 0) | (filter.endDate !== undefined ? 4 : 0)
    let statement = this.listStatements.get(mask)
    if (statement === undefined) {
      statement = this.prepareList(mask)
      this.listStatements.set(mask, statement)
    }
    const [row] = await statement.execute({
      town: filter.town,
      startDate: filter.startDate,
      endDate: filter.endDate,
      limit: filter.limit,
      offset: filter.offset
    })
    return row?.body ?? '[]'
  }

  /** listPrices' rows as keyset batches in the same order, so a long export never repeats a row. */
  async * streamPrices (filter: PriceStreamFilter, batchSize = EXPORT_BATCH_SIZE): AsyncGenerator<FuelPrice[], void, undefined> {
    let remaining = filter.limit ?? Number.POSITIVE_INFINITY
    let last: FuelPrice | undefined
    while (remaining > 0) {
      const size = Math.min(batchSize, remaining)
      const conditions = filterConditions({
        town: filter.town === undefined ? undefined : sql`${filter.town}`,
        startDate: filter.startDate === undefined ? undefined : sql`${filter.startDate}`,
        endDate: filter.endDate === undefined ? undefined : sql`${filter.endDate}`
      })
      if (last !== undefined) conditions.push(after(last))
      const rows: FuelPrice[] = await this.db.select(fuelPriceColumns).from(fuelPrices)
        .where(conditions.length > 0 ? and(...conditions) : undefined)
        .orderBy(...listOrder)
        .limit(size)
        .offset(last === undefined ? filter.offset : 0)
      if (rows.length > 0) yield rows
      if (rows.length < size) return
      remaining -= rows.length
      last = rows[rows.length - 1]
    }
  }

  /** The latest cycle, each town's record as FuelPrice JSON, in town order. */
  async latestPrices (): Promise<LatestRecords> {
    return await this.latestStatement.execute()
  }

  async listTowns (): Promise<string[]> {
    return await this.townsStatement.execute()
  }

  /** Spec 4.5 rule 6: the upsert in one transaction, of a file's batches as its parser gives them (D46). */
  async ingest (batches: Iterable<RowBatch> | AsyncIterable<RowBatch>, options?: WriteOptions): Promise<IngestOutcome> {
    return await writeBatches(this.database, batches, options)
  }

  async storedForReview (rows: readonly PriceRow[]): Promise<StoredPrice[]> {
    return await storedForReview(this.database, rows)
  }

  private prepareList (mask: number) {
    const conditions = filterConditions({
      town: (mask & 1) !== 0 ? sql.placeholder('town') : undefined,
      startDate: (mask & 2) !== 0 ? sql.placeholder('startDate') : undefined,
      endDate: (mask & 4) !== 0 ? sql.placeholder('endDate') : undefined
    })
    const page = this.db.select(fuelPriceColumns).from(fuelPrices)
      .where(conditions.length > 0 ? and(...conditions) : undefined)
      .orderBy(...listOrder)
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .as('p')
    // The whole page as one JSON text; the aggregate keeps the page's order.
    return this.db.select({
      body: sql<string | null>`'[' || string_agg(${FUEL_PRICE_JSON}, ',' ORDER BY p.valid_from DESC, ${townOrder('p.town')}, p.id) || ']'`
    }).from(page).prepare(`list_prices_${mask}`)
  }
}

type FilterValue = SQL | ReturnType<typeof sql.placeholder>

function filterConditions (filter: { town: FilterValue | undefined, startDate: FilterValue | undefined, endDate: FilterValue | undefined }): SQL[] {
  const conditions: SQL[] = []
  if (filter.town !== undefined) conditions.push(sql`${townOrderKey} = lower(${filter.town})`)
  if (filter.startDate !== undefined) conditions.push(gte(fuelPrices.validFrom, sql`${filter.startDate}::date`))
  if (filter.endDate !== undefined) {
    conditions.push(lte(fuelPrices.validTo, sql`${filter.endDate}::date`))
    // A cycle starts 27 or more days before it ends (a CHECK): the implied bound lets the index range-scan.
    conditions.push(lte(fuelPrices.validFrom, sql`${filter.endDate}::date - 27`))
  }
  return conditions
}

/**
 * Rows after `row` in the list's order: valid_from desc, then lower(town) byte-wise, then id. The
 * first bound alone is redundant, but it is the one the order index can start from: without it each
 * batch of an export scanned every row before it (the 30th batch of a 20-year table, 29,000 rows).
 */
function after (row: FuelPrice): SQL {
  return and(
    lte(fuelPrices.validFrom, row.valid_from),
    or(lt(fuelPrices.validFrom, row.valid_from), sql`(${townOrderKey}, ${fuelPrices.id}) > (${townOrder(sql`${row.town}`)}, ${row.id})`)
  ) as SQL
}
