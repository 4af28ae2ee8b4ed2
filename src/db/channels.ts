import type { Database } from './client.js'

/** D26 notification channel (fires on commit); one per schema, so test schemas never clear each other. */
export function pricesChangedChannel (database: Pick<Database, 'schema'>): string {
  return database.schema === undefined ? 'fuel_prices_changed' : `fuel_prices_changed_${database.schema}`
}
