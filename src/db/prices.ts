import { and, asc, desc, eq, gt, gte, lt, lte, or, sql, type SQL } from 'drizzle-orm'
import type { FuelPrice } from '../generated/openapi.js'
import type { PriceRow } from '../ingest/csv.js'
import { rowsOf, type AppDb, type Database } from './client.js'
import type { CycleReview } from '../ingest/plausibility.js'
import { countRows, reviewRows, type IngestOutcome } from '../ingest/review.js'
import { writeBatches, type WriteOptions } from '../ingest/write.js'
import { fuelPrices } from './schema.js'

export interface PriceFilter {
  /** D4: already trimmed and white-space collapsed; compared with lower() on both sides. */
  town?: string | undefined
  startDate?: string | undefined
  endDate?: string | undefined
  limit: number
  offset: number
}

/** A GET /v1/prices filter for an export: `limit` undefined means every matching row. */
interface PriceStreamFilter extends Omit<PriceFilter, 'limit'> {
  limit?: number | undefined
}

/** Rows per query of an export: one round trip per batch, one batch in memory at a time. */
const EXPORT_BATCH_SIZE = 1000

// D3: "case-insensitively" is lower(town) compared byte-wise, the same on every server/locale
// (domain/town.ts `townKey` is the same key in JavaScript).
const townOrderKey = sql`lower(${fuelPrices.town}) COLLATE "C"`

// D2: the one total order of /v1/prices.
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

/** The same columns named for a subquery whose rows become JSON objects (row_to_json). */
const pageColumns = {
  ...priceColumns,
  super_petrol: sql<number>`${fuelPrices.superPetrol}::float8`.as('super_petrol'),
  diesel: sql<number>`${fuelPrices.diesel}::float8`.as('diesel'),
  kerosene: sql<number>`${fuelPrices.kerosene}::float8`.as('kerosene')
}

/**
 * Reads and writes of fuel_prices. Each shape of /v1/prices query (which filters are present) is
 * one prepared statement, built once, so a request costs one round trip and no SQL building.
 */
export class PricesRepository {
  private readonly listStatements = new Map<number, ReturnType<PricesRepository['prepareList']>>()
  private readonly latestStatement
  private readonly townsStatement
  private readonly db: AppDb

  constructor (private readonly database: Database) {
    const db = this.db = database.db
    // D1: the latest cycle is the highest valid_from in the table, not the calendar's cycle.
    this.latestStatement = db.select(priceColumns).from(fuelPrices)
      .where(eq(fuelPrices.validFrom, sql`(SELECT max(${fuelPrices.validFrom}) FROM ${fuelPrices})`))
      .orderBy(townOrderKey, asc(fuelPrices.id))
      .prepare('latest_prices')
    // D3 order. A skip scan over fuel_prices_town_order_idx: one index probe per distinct town
    // instead of reading every row of twenty years of history.
    this.townsStatement = {
      execute: async (): Promise<string[]> => {
        const result = await db.execute<{ town: string }>(sql`
          WITH RECURSIVE towns AS (
            (SELECT lower(town) COLLATE "C" AS key, town FROM fuel_prices ORDER BY 1 LIMIT 1)
            UNION ALL
            SELECT next.key, next.town FROM towns, LATERAL (
              SELECT lower(town) COLLATE "C" AS key, town FROM fuel_prices
              WHERE lower(town) COLLATE "C" > towns.key ORDER BY 1 LIMIT 1
            ) AS next
          )
          SELECT town FROM towns`)
        return rowsOf<{ town: string }>(result).map((r) => r.town)
      }
    }
  }

  /**
   * A page of GET /v1/prices as the JSON body itself, built by PostgreSQL: one text value per
   * request instead of a hundred row objects mapped and serialised again in JavaScript.
   */
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

  /**
   * The rows of `listPrices` for the same filter, in the same D2 order, as batches: the first
   * query skips `offset` rows, every later one continues after the last row it has seen (keyset
   * on valid_from desc, lower(town) byte-wise, id), so a long export costs one index range scan
   * per batch rather than ever longer offset skips, and an ingest committed meanwhile can add
   * or change rows but never make the export repeat one.
   */
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

  /**
   * Spec 4.5 rule 6, D14: validated rows upserted in one transaction (see ingest/write.ts), batch
   * by batch as they are read (D46; `[rows]` when all are at hand).
   */
  async ingest (batches: Iterable<readonly PriceRow[]>, options?: WriteOptions): Promise<IngestOutcome> {
    return await writeBatches(this.database, batches, options)
  }

  /** D40: what `ingest` would report for the rows, with nothing written (the dry run). */
  async count (rows: readonly PriceRow[]): Promise<IngestOutcome> {
    return await countRows(this.database, rows)
  }

  /** D40: the dry run's review of a file's cycles against the cycles before them. */
  async review (rows: readonly PriceRow[], share: number): Promise<CycleReview[]> {
    return await reviewRows(this.database, rows, share)
  }

  private prepareList (mask: number) {
    const conditions = filterConditions({
      town: (mask & 1) !== 0 ? sql.placeholder('town') : undefined,
      startDate: (mask & 2) !== 0 ? sql.placeholder('startDate') : undefined,
      endDate: (mask & 4) !== 0 ? sql.placeholder('endDate') : undefined
    })
    const page = this.db.select(pageColumns).from(fuelPrices)
      .where(conditions.length > 0 ? and(...conditions) : undefined)
      // D2: one total order, so offset pages never skip or repeat a row.
      .orderBy(...listOrder)
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .as('p')
    // row_to_json writes the fields in the contract's order, compactly; the aggregate keeps D2.
    return this.db.select({
      body: sql<string | null>`'[' || string_agg(row_to_json(p)::text, ',' ORDER BY p.valid_from DESC, lower(p.town) COLLATE "C", p.id) || ']'`
    }).from(page).prepare(`list_prices_${mask}`)
  }
}

/** A filter value: a bound parameter, or a placeholder of a prepared statement. */
type FilterValue = SQL | ReturnType<typeof sql.placeholder>

/** The WHERE conditions of a /v1/prices filter: the one statement of them, for pages and exports. */
function filterConditions (filter: { town: FilterValue | undefined, startDate: FilterValue | undefined, endDate: FilterValue | undefined }): SQL[] {
  const conditions: SQL[] = []
  if (filter.town !== undefined) conditions.push(sql`${townOrderKey} = lower(${filter.town})`)
  if (filter.startDate !== undefined) conditions.push(gte(fuelPrices.validFrom, sql`${filter.startDate}::date`))
  if (filter.endDate !== undefined) {
    conditions.push(lte(fuelPrices.validTo, sql`${filter.endDate}::date`))
    // valid_to is always valid_from + 1 month - 1 day (a CHECK constraint, D8), at least 27
    // days later, so this implied bound lets the index range-scan on valid_from as well.
    conditions.push(lte(fuelPrices.validFrom, sql`${filter.endDate}::date - 27`))
  }
  return conditions
}

/** Rows after `row` in D2 order: valid_from desc, then lower(town) byte-wise, then id. */
function after (row: FuelPrice): SQL {
  const town = sql`lower(${row.town}) COLLATE "C"`
  return or(
    lt(fuelPrices.validFrom, row.valid_from),
    and(
      eq(fuelPrices.validFrom, row.valid_from),
      or(gt(townOrderKey, town), and(eq(townOrderKey, town), gt(fuelPrices.id, row.id)))
    )
  ) as SQL
}
