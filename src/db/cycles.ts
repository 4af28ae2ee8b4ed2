import { sql, type SQL } from 'drizzle-orm'
import { pricesChangedChannel } from './channels.js'
import { rowsOf, type AppDb, type Database } from './client.js'
import { INGEST_LOCK_KEY } from '../ingest/write.js'

/**
 * Reads about whole cycles: their statistics (/v1/cycles), each town's change since the cycle
 * before (/v1/prices/changes), and freshness (/v1/health). Answers are JSON text built by
 * PostgreSQL, like /v1/prices pages, so the read cache keeps them as they are.
 */

const FUELS = ['super_petrol', 'diesel', 'kerosene'] as const

// D3: towns compared and ordered by lower(town) byte-wise.
const townKey = (column: string): SQL => sql.raw(`lower(${column}) COLLATE "C"`)

/**
 * Per fuel: min, max, mean and median (two decimals) and the cheapest and dearest town (ties go
 * to the first town in D3 order), as one JSON object.
 */
function fuelStats (fuel: typeof FUELS[number]): SQL {
  const c = sql.raw(`f.${fuel}`)
  const town = townKey('f.town')
  return sql`json_build_object(
    'min', min(${c})::float8,
    'max', max(${c})::float8,
    'mean', round(avg(${c}), 2)::float8,
    'median', round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ${c})::numeric, 2)::float8,
    'cheapest_town', (array_agg(f.town ORDER BY ${c}, ${town}))[1],
    'dearest_town', (array_agg(f.town ORDER BY ${c} DESC, ${town}))[1]
  )`
}

/** One cycle as the contract's Cycle summary. */
const CYCLE_JSON = sql`json_build_object(
  'valid_from', f.valid_from,
  'valid_to', f.valid_to,
  'towns', count(*)::int,
  'published_at', to_char(min(f.published_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
  'super_petrol', ${fuelStats('super_petrol')},
  'diesel', ${fuelStats('diesel')},
  'kerosene', ${fuelStats('kerosene')}
)`

/**
 * PostgreSQL's json text spaces its objects (`"key" : value`); every other answer is compact
 * (row_to_json). Re-serialised once per read-cache fill, keys in the same order.
 */
function compact (json: string): string {
  return JSON.stringify(JSON.parse(json))
}

export class CycleReads {
  constructor (private readonly db: AppDb) {}

  /** GET /v1/cycles: newest first, paged like /v1/prices; `[]` past the end. */
  async listCycles (limit: number, offset: number): Promise<string> {
    const result = await this.db.execute<{ body: string | null }>(sql`
      SELECT '[' || string_agg(c.summary::text, ',' ORDER BY c.valid_from DESC) || ']' AS body
      FROM (
        SELECT f.valid_from, ${CYCLE_JSON} AS summary FROM fuel_prices AS f
        GROUP BY f.valid_from, f.valid_to ORDER BY f.valid_from DESC LIMIT ${limit} OFFSET ${offset}
      ) AS c`)
    return compact(rowsOf<{ body: string | null }>(result)[0]?.body ?? '[]')
  }

  /** GET /v1/cycles/{valid_from}: the one cycle, or undefined when none starts that day. */
  async getCycle (validFrom: string): Promise<string | undefined> {
    const result = await this.db.execute<{ body: string }>(sql`
      SELECT ${CYCLE_JSON}::text AS body FROM fuel_prices AS f
      WHERE f.valid_from = ${validFrom}::date GROUP BY f.valid_from, f.valid_to`)
    const body = rowsOf<{ body: string }>(result)[0]?.body
    return body === undefined ? undefined : compact(body)
  }

  /** Summaries of the newest `count` cycles, newest first, for the Atom feed. */
  async recentCycles (count: number): Promise<CycleSummary[]> {
    return JSON.parse(await this.listCycles(count, 0)) as CycleSummary[]
  }

  /**
   * GET /v1/prices/changes: each town of the cycle starting `validFrom` (default: the latest,
   * D1) beside its record in the cycle before it (the highest valid_from stored below), with the
   * difference per fuel; previous and change are null for a town that had no record then.
   * D3 order, like latest. Undefined when `validFrom` is given and no cycle starts that day.
   */
  async changes (validFrom: string | undefined, town: string | undefined): Promise<string | undefined> {
    const fuels = FUELS.map((fuel) => sql.raw(`'${fuel}', json_build_object(
      'price', c.${fuel}::float8, 'previous', p.${fuel}::float8, 'change', (c.${fuel} - p.${fuel})::float8)`))
    const result = await this.db.execute<{ found: boolean, body: string | null }>(sql`
      WITH cycle AS (SELECT coalesce(${validFrom ?? null}::date, (SELECT max(valid_from) FROM fuel_prices)) AS v)
      SELECT EXISTS (SELECT 1 FROM fuel_prices, cycle WHERE valid_from = cycle.v) AS found, (
        SELECT '[' || string_agg(json_build_object(
            'town', c.town, 'valid_from', c.valid_from, 'valid_to', c.valid_to, 'previous_valid_from', p.valid_from,
            ${sql.join(fuels, sql`, `)}
          )::text, ',' ORDER BY ${townKey('c.town')}, c.id) || ']'
        FROM cycle, fuel_prices AS c
        LEFT JOIN fuel_prices AS p ON p.town = c.town AND p.valid_from = (
          SELECT max(valid_from) FROM fuel_prices WHERE valid_from < c.valid_from)
        WHERE c.valid_from = cycle.v
          ${town === undefined ? sql`` : sql`AND ${townKey('c.town')} = lower(${town})`}
      ) AS body FROM cycle`)
    const row = rowsOf<{ found: boolean, body: string | null }>(result)[0]
    if (validFrom !== undefined && row?.found !== true) return undefined
    return compact(row?.body ?? '[]')
  }

  /**
   * /v1/health's freshness: the latest cycle (D1) and whether the cycle starting
   * `currentValidFrom` (the one covering today in Kenya) is stored. One index probe each; it
   * doubles as the connectivity check.
   */
  async freshness (currentValidFrom: string): Promise<{ latest: string | null, current: boolean }> {
    const result = await this.db.execute<{ latest: string | null, current: boolean }>(sql`
      SELECT (SELECT max(valid_from) FROM fuel_prices)::text AS latest,
             EXISTS (SELECT 1 FROM fuel_prices WHERE valid_from = ${currentValidFrom}::date) AS current`)
    const row = rowsOf<{ latest: string | null, current: boolean }>(result)[0]
    return { latest: row?.latest ?? null, current: row?.current === true }
  }
}

/** A cycle that was withdrawn: its dates and how many records went. */
export interface WithdrawnCycle {
  validFrom: string
  validTo: string
  rowsRemoved: number
}

/**
 * DELETE /v1/cycles/{valid_from} (D54): the cycle's records removed in one transaction, taking
 * turns with ingests (D14's lock) and notifying every replica at COMMIT as an ingest does (D26).
 * Undefined, with nothing written or notified, when no cycle starts that day.
 */
export async function withdrawCycle (database: Database, validFrom: string, notifyPayload: string): Promise<WithdrawnCycle | undefined> {
  return await database.db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${INGEST_LOCK_KEY}::bigint)`)
    const [gone] = rowsOf<{ removed: number, valid_to: string | null }>(await tx.execute(sql`
      WITH gone AS (DELETE FROM fuel_prices WHERE valid_from = ${validFrom}::date RETURNING valid_to)
      SELECT count(*)::int AS removed, min(valid_to)::text AS valid_to FROM gone`))
    if (gone === undefined || gone.removed === 0 || gone.valid_to === null) return undefined
    if (database.kind === 'postgres') await tx.execute(sql`SELECT pg_notify(${pricesChangedChannel(database)}, ${notifyPayload})`)
    return { validFrom, validTo: gone.valid_to, rowsRemoved: gone.removed }
  })
}

export interface FuelStats {
  min: number
  max: number
  mean: number
  median: number
  cheapest_town: string
  dearest_town: string
}

export interface CycleSummary {
  valid_from: string
  valid_to: string
  towns: number
  published_at: string | null
  super_petrol: FuelStats
  diesel: FuelStats
  kerosene: FuelStats
}
