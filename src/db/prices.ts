import { and, asc, desc, eq, gt, gte, lt, lte, or, sql, type SQL } from 'drizzle-orm'
import type { FuelPrice } from '../generated/openapi.js'
import { rowsOf, type AppDb, type Database } from './client.js'
import type { IngestOutcome, PriceRow, StoredPrice } from '../domain/price-rows.js'
import { countRows, storedForReview } from './ingest-dry-run.js'
import { writeBatches, type WriteOptions } from './ingest-write.js'
import { fuelPrices, townOrder } from './schema.js'

export interface PriceFilter {
  /** The town's canonical form (townFilter); compared in town order, so case never matters. */
  town?: string | undefined
  startDate?: string | undefined
  endDate?: string | undefined
  limit: number
  offset: number
}

interface PriceStreamFilter extends Omit<PriceFilter, 'limit'> {
  limit?: number | undefined
}

/** Rows per query of an export: one round trip per batch, one batch in memory at a time. */
const EXPORT_BATCH_SIZE = 1000

const townOrderKey = townOrder(fuelPrices.town)
/** The same key of a query's own unqualified `town`. */
const bareTownOrder = townOrder(sql.raw('town'))

// /v1/prices' one total order: newest cycle first, then town order, then id (D2).
const listOrder = [desc(fuelPrices.validFrom), townOrderKey, asc(fuelPrices.id)]

/** Columns as the API returns them: numeric(6,2) cast to float8 so they leave as JSON numbers. */
const priceColumns = {
  id: fuelPrices.id,
  town: fuelPrices.town,
  super_petrol: sql<number>`${fuelPrices.superPetrol}::float8`,
  diesel: sql<number>`${fuelPrices.diesel}::float8`,
  kerosene: sql<number>`${fuelPrices.kerosene}::float8`,
  valid_from: fuelPrices.validFrom,
  valid_to: fuelPrices.validTo
}

const pageColumns = {
  ...priceColumns,
  super_petrol: sql<number>`${fuelPrices.superPetrol}::float8`.as('super_petrol'),
  diesel: sql<number>`${fuelPrices.diesel}::float8`.as('diesel'),
  kerosene: sql<number>`${fuelPrices.kerosene}::float8`.as('kerosene')
}

/** Reads and writes of fuel_prices; each /v1/prices filter shape is one prepared statement. */
export class PricesRepository {
  private readonly listStatements = new Map<number, ReturnType<PricesRepository['prepareList']>>()
  private readonly latestStatement
  private readonly townsStatement
  private readonly db: AppDb

  constructor (private readonly database: Database) {
    const db = this.db = database.db
    // The latest cycle is the highest valid_from stored, not the calendar's cycle (D1).
    this.latestStatement = db.select(priceColumns).from(fuelPrices)
      .where(eq(fuelPrices.validFrom, sql`(SELECT max(${fuelPrices.validFrom}) FROM ${fuelPrices})`))
      .orderBy(townOrderKey, asc(fuelPrices.id))
      .prepare('latest_prices')
    // Town order, by a skip scan over fuel_prices_town_order_idx: one index probe per distinct town.
    this.townsStatement = {
      execute: async (): Promise<string[]> => {
        const result = await db.execute<{ town: string }>(sql`
          WITH RECURSIVE towns AS (
            (SELECT ${bareTownOrder} AS key, town FROM fuel_prices ORDER BY 1 LIMIT 1)
            UNION ALL
            SELECT next.key, next.town FROM towns, LATERAL (
              SELECT ${bareTownOrder} AS key, town FROM fuel_prices
              WHERE ${bareTownOrder} > towns.key ORDER BY 1 LIMIT 1
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

  /** listPrices' rows as keyset batches in its order, so a long export never repeats a row. */
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
      const rows: FuelPrice[] = await this.db.select(priceColumns).from(fuelPrices)
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

  async latestPrices (): Promise<FuelPrice[]> {
    return await this.latestStatement.execute()
  }

  async listTowns (): Promise<string[]> {
    return await this.townsStatement.execute()
  }

  /** The ingest's write (spec 4.5 rule 6): one transaction, batch by batch as the file is read. */
  async ingest (batches: Iterable<readonly PriceRow[]>, options?: WriteOptions): Promise<IngestOutcome> {
    return await writeBatches(this.database, batches, options)
  }

  /** What `ingest` would report for the rows, with nothing written (the dry run). */
  async count (rows: readonly PriceRow[]): Promise<IngestOutcome> {
    return await countRows(this.database, rows)
  }

  /** The stored records the dry run's review compares the rows with. */
  async storedForReview (rows: readonly PriceRow[]): Promise<StoredPrice[]> {
    return await storedForReview(this.database, rows)
  }

  private prepareList (mask: number) {
    const conditions = filterConditions({
      town: (mask & 1) !== 0 ? sql.placeholder('town') : undefined,
      startDate: (mask & 2) !== 0 ? sql.placeholder('startDate') : undefined,
      endDate: (mask & 4) !== 0 ? sql.placeholder('endDate') : undefined
    })
    const page = this.db.select(pageColumns).from(fuelPrices)
      .where(conditions.length > 0 ? and(...conditions) : undefined)
      // One total order, so offset pages never skip or repeat a row.
      .orderBy(...listOrder)
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .as('p')
    // row_to_json writes the fields in the contract's order, compactly; the aggregate keeps the page's order.
    return this.db.select({
      body: sql<string | null>`'[' || string_agg(row_to_json(p)::text, ',' ORDER BY p.valid_from DESC, ${townOrder(sql.raw('p.town'))}, p.id) || ']'`
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
    // A cycle's valid_from is 27+ days before its valid_to (a CHECK): the implied bound lets the index range-scan.
    conditions.push(lte(fuelPrices.validFrom, sql`${filter.endDate}::date - 27`))
  }
  return conditions
}

/** Rows after `row` in the list's order: valid_from descending, then town order, then id. */
function after (row: FuelPrice): SQL {
  const town = townOrder(sql`${row.town}`)
  return or(
    lt(fuelPrices.validFrom, row.valid_from),
    and(
      eq(fuelPrices.validFrom, row.valid_from),
      or(gt(townOrderKey, town), and(eq(townOrderKey, town), gt(fuelPrices.id, row.id)))
    )
  ) as SQL
}
