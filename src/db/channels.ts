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

/**
 * Calls `heard` with each payload announced on the change channel, and `connected` at each
 * (re)connect of the listening connection, as notifications sent while it was down are lost.
 * Returns how to stop listening; undefined on PGlite, where there is nothing to hear.
 */
export async function listenForPriceChanges (database: Database, heard: (payload: string) => void, connected: () => void): Promise<(() => Promise<void>) | undefined> {
  if (database.sql === undefined) return undefined
  const subscription = await database.sql.listen(pricesChangedChannel(database), heard, connected)
  return async () => { await subscription.unlisten() }
}
