import { sql } from 'drizzle-orm'
import type { AppDb, Database } from './client.js'

/** The channel a change of fuel_prices is announced on; one per schema, so test schemas never clear each other. */
export function pricesChangedChannel (database: Pick<Database, 'schema'>): string {
  return database.schema === undefined ? 'fuel_prices_changed' : `fuel_prices_changed_${database.schema}`
}

/** Heard by every replica at COMMIT, not at all on rollback (D26); on PGlite there is nobody to tell. */
export async function notifyPricesChanged (tx: Pick<AppDb, 'execute'>, database: Database, payload: string): Promise<void> {
  if (database.kind === 'postgres') await tx.execute(sql`SELECT pg_notify(${pricesChangedChannel(database)}, ${payload})`)
}

/** `connected` runs at each reconnect, as notifications sent while down are lost; undefined on PGlite. */
export async function listenForPriceChanges (database: Database, heard: (payload: string) => void, connected: () => void): Promise<(() => Promise<void>) | undefined> {
  if (database.sql === undefined) return undefined
  const subscription = await database.sql.listen(pricesChangedChannel(database), heard, connected)
  return async () => { await subscription.unlisten() }
}
