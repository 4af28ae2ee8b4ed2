import { sql } from 'drizzle-orm'
import type { AppDb, Database } from './client.js'

/** The channel a change of fuel_prices is announced on; one per schema, so test schemas never clear each other. */
export function pricesChangedChannel (database: Pick<Database, 'schema'>): string {
  return database.schema === undefined ? 'fuel_prices_changed' : `fuel_prices_changed_${database.schema}`
}

/**
 * Inside a write's transaction: every replica hears `payload` once the transaction commits, and
 * not at all if it rolls back (D26). On PGlite one process holds the database: nobody to tell.
 */
export async function notifyPricesChanged (tx: Pick<AppDb, 'execute'>, database: Database, payload: string): Promise<void> {
  if (database.kind === 'postgres') await tx.execute(sql`SELECT pg_notify(${pricesChangedChannel(database)}, ${payload})`)
}
