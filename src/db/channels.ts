import type { Database } from './client.js'

/**
 * D26: the channel an ingest notifies (inside its transaction, so it fires only on commit). It
 * carries the schema name when there is one, so that databases shared by several schemas (the
 * test suite) do not clear each other's caches.
 */
export function pricesChangedChannel (database: Pick<Database, 'schema'>): string {
  return database.schema === undefined ? 'fuel_prices_changed' : `fuel_prices_changed_${database.schema}`
}
