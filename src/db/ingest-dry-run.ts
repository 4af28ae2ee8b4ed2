import { sql } from 'drizzle-orm'
import { rowsOf, type Database } from './client.js'
import type { PriceRow, StoredPrice } from '../domain/price-rows.js'

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
