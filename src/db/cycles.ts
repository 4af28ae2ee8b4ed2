import { sql, type SQL } from 'drizzle-orm'
import type { Static, TObject } from '@sinclair/typebox'
import { FUELS, type FuelKey } from '../domain/fuels.js'
import { CycleSummary, FuelChange, FuelStats, PriceChange } from '../generated/openapi.js'
import { notifyPricesChanged } from './channels.js'
import { inFieldOrder } from './field-order.js'
import { rowsOf, type AppDb, type Database } from './client.js'
import { INGEST_STATEMENT_TIMEOUT_MS, takeIngestLock } from './locks.js'
import { townOrder } from './schema.js'

const perFuel = (value: (fuel: FuelKey) => SQL): Record<FuelKey, SQL> =>
  Object.fromEntries(FUELS.map(({ key }) => [key, value(key)])) as Record<FuelKey, SQL>

/** Compact JSON in `schema`'s field order (json_build_object would add spaces); an aggregate must name an outer column, not `count(*)`. */
function jsonObject<S extends TObject> (schema: S, values: Record<keyof Static<S>, SQL>): SQL {
  const fields = Object.entries(inFieldOrder(schema, values)).map(([name, value]) => sql`${value} AS ${sql.identifier(name)}`)
  return sql`(SELECT row_to_json(o) FROM (SELECT ${sql.join(fields, sql`, `)}) AS o)`
}

/** Per fuel: min, max, mean, median and the cheapest and dearest town (ties: the first in town order). */
function fuelStats (fuel: FuelKey): SQL {
  const c = sql.raw(`f.${fuel}`)
  const town = townOrder('f.town')
  return jsonObject(FuelStats, {
    min: sql`min(${c})::float8`,
    max: sql`max(${c})::float8`,
    mean: sql`round(avg(${c}), 2)::float8`,
    median: sql`round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ${c})::numeric, 2)::float8`,
    cheapest_town: sql`(array_agg(f.town ORDER BY ${c}, ${town}))[1]`,
    dearest_town: sql`(array_agg(f.town ORDER BY ${c} DESC, ${town}))[1]`
  })
}

/** One cycle's summary, over the rows `f` of a query grouped by cycle. */
const CYCLE_JSON = jsonObject(CycleSummary, {
  valid_from: sql`f.valid_from`,
  valid_to: sql`f.valid_to`,
  towns: sql`count(f.town)::int`,
  published_at: sql`to_char(min(f.published_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`,
  ...perFuel(fuelStats)
})

/** One fuel of a town's change: its price `c` beside `p`, the same town's in the cycle before. */
const fuelChange = (fuel: FuelKey): SQL => jsonObject(FuelChange, {
  price: sql.raw(`c.${fuel}::float8`),
  previous: sql.raw(`p.${fuel}::float8`),
  change: sql.raw(`(c.${fuel} - p.${fuel})::float8`)
})

const CHANGE_JSON = jsonObject(PriceChange, {
  town: sql`c.town`,
  valid_from: sql`c.valid_from`,
  valid_to: sql`c.valid_to`,
  previous_valid_from: sql`p.valid_from`,
  ...perFuel(fuelChange)
})

/** Reads of whole cycles, as JSON text PostgreSQL writes and the read cache keeps as is. */
export class CyclesRepository {
  constructor (private readonly db: AppDb) {}

  /**
   * GET /v1/cycles: newest first, paged like /v1/prices; `[]` past the end. The page's newest cycle
   * is found first, one index probe per cycle skipped, and the summaries start there: summarising
   * every cycle up to the offset cost a deep page of a 50-year history most of a second.
   */
  async listCycles (limit: number, offset: number): Promise<string> {
    const result = await this.db.execute<{ body: string | null }>(sql`
      WITH RECURSIVE newest (v) AS (
        SELECT max(valid_from) FROM fuel_prices
        UNION ALL
        SELECT (SELECT max(valid_from) FROM fuel_prices WHERE valid_from < newest.v) FROM newest WHERE newest.v IS NOT NULL
      ), page AS (SELECT v FROM newest WHERE v IS NOT NULL LIMIT ${limit} OFFSET ${offset})
      SELECT '[' || string_agg(c.summary::text, ',' ORDER BY c.valid_from DESC) || ']' AS body
      FROM (
        SELECT f.valid_from, ${CYCLE_JSON} AS summary FROM fuel_prices AS f
        WHERE f.valid_from <= (SELECT max(v) FROM page)
        GROUP BY f.valid_from, f.valid_to ORDER BY f.valid_from DESC LIMIT ${limit}
      ) AS c`)
    return rowsOf<{ body: string | null }>(result)[0]?.body ?? '[]'
  }

  async getCycle (validFrom: string): Promise<string | undefined> {
    const result = await this.db.execute<{ body: string }>(sql`
      SELECT ${CYCLE_JSON}::text AS body FROM fuel_prices AS f
      WHERE f.valid_from = ${validFrom}::date GROUP BY f.valid_from, f.valid_to`)
    return rowsOf<{ body: string }>(result)[0]?.body
  }

  /** The newest `count` cycles, newest first (the feed). */
  async recentCycles (count: number): Promise<CycleSummary[]> {
    return JSON.parse(await this.listCycles(count, 0)) as CycleSummary[]
  }

  /** Each town of the cycle (default: the latest) beside its record in the cycle before, or nulls. */
  async changes (validFrom: string | undefined, town: string | undefined): Promise<string | undefined> {
    const result = await this.db.execute<{ found: boolean, body: string | null }>(sql`
      WITH cycle AS (SELECT coalesce(${validFrom ?? null}::date, (SELECT max(valid_from) FROM fuel_prices)) AS v)
      SELECT EXISTS (SELECT 1 FROM fuel_prices, cycle WHERE valid_from = cycle.v) AS found, (
        SELECT '[' || string_agg(${CHANGE_JSON}::text, ',' ORDER BY ${townOrder('c.town')}, c.id) || ']'
        FROM cycle, fuel_prices AS c
        LEFT JOIN fuel_prices AS p ON p.town = c.town AND p.valid_from = (
          SELECT max(valid_from) FROM fuel_prices WHERE valid_from < c.valid_from)
        WHERE c.valid_from = cycle.v
          ${town === undefined ? sql`` : sql`AND ${townOrder('c.town')} = lower(${town})`}
      ) AS body FROM cycle`)
    const row = rowsOf<{ found: boolean, body: string | null }>(result)[0]
    if (validFrom !== undefined && row?.found !== true) return undefined
    return row?.body ?? '[]'
  }

  /** The latest cycle and whether today's is stored (health); also the connectivity check. */
  async freshness (currentValidFrom: string): Promise<{ latest: string | null, current: boolean }> {
    const result = await this.db.execute<{ latest: string | null, current: boolean }>(sql`
      SELECT (SELECT max(valid_from) FROM fuel_prices)::text AS latest,
             EXISTS (SELECT 1 FROM fuel_prices WHERE valid_from = ${currentValidFrom}::date) AS current`)
    const row = rowsOf<{ latest: string | null, current: boolean }>(result)[0]
    return { latest: row?.latest ?? null, current: row?.current === true }
  }
}

export interface WithdrawnCycle {
  validFrom: string
  validTo: string
  rowsRemoved: number
}

/** One transaction under the ingest lock, telling every replica at COMMIT; undefined when no cycle starts that day. */
export async function withdrawCycle (database: Database, validFrom: string, notifyPayload: string, lockWaitMs = INGEST_STATEMENT_TIMEOUT_MS): Promise<WithdrawnCycle | undefined> {
  return await database.db.transaction(async (tx) => {
    await takeIngestLock(tx, lockWaitMs)
    const [gone] = rowsOf<{ removed: number, valid_to: string | null }>(await tx.execute(sql`
      WITH gone AS (DELETE FROM fuel_prices WHERE valid_from = ${validFrom}::date RETURNING valid_to)
      SELECT count(*)::int AS removed, min(valid_to)::text AS valid_to FROM gone`))
    if (gone === undefined || gone.removed === 0 || gone.valid_to === null) return undefined
    await notifyPricesChanged(tx, database, notifyPayload)
    return { validFrom, validTo: gone.valid_to, rowsRemoved: gone.removed }
  })
}
