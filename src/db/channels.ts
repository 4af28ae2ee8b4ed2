import { sql } from 'drizzle-orm'
import type postgres from 'postgres'
import type { AppDb, Database } from './client.js'

/** The channel a change of fuel_prices is announced on; one per schema, so test schemas never clear each other. */
export function pricesChangedChannel (database: Pick<Database, 'schema'>): string {
  return database.schema === undefined ? 'fuel_prices_changed' : `fuel_prices_changed_${database.schema}`
}

/** The name of every replica's listening connection on the channel, as PostgreSQL stores it (63 bytes at most). */
function listenerName (database: Pick<Database, 'schema'>): string {
  return `fuel-listener ${pricesChangedChannel(database)}`.slice(0, 63)
}

/** On PGlite there is nobody to tell. */
async function send (executor: Pick<AppDb, 'execute'>, database: Database, payload: string): Promise<void> {
  if (database.kind === 'postgres') await executor.execute(sql`SELECT pg_notify(${pricesChangedChannel(database)}, ${payload})`)
}

/** Heard by every replica at COMMIT, not at all on rollback (D26). */
export async function notifyPricesChanged (tx: Pick<AppDb, 'execute'>, database: Database, payload: string): Promise<void> {
  await send(tx, database, payload)
}

/** How many replicas listen on the channel now, this one included: the confirmations a write waits for. */
export async function countListeners (database: Database): Promise<number> {
  if (database.sql === undefined) return 0
  const [row] = await database.sql<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = ${listenerName(database)}`
  return row?.n ?? 0
}

/** What a replica sends back, on the same channel, once it has cleared its cache for another's write. */
const CONFIRMED = 'confirmed '

/** Sent by a replica once it stopped serving what another's write (named by its payload) replaced. */
export async function confirmPricesChanged (database: Database, payload: string): Promise<void> {
  await send(database.db, database, CONFIRMED + payload)
}

export interface PriceChangeListener {
  /** Another replica's write committed (or a write from outside the service, with no payload). */
  changed: (payload: string) => void
  /** A replica confirmed the write with this payload. */
  confirmed: (payload: string) => void
  /** Runs at each (re)connect, as notifications sent while down are lost. */
  connected: () => void
}

/** Listens on its own named connection, so writers can count the replicas; undefined on PGlite. */
export async function listenForPriceChanges (database: Database, listener: PriceChangeListener): Promise<(() => Promise<void>) | undefined> {
  if (database.sql === undefined) return undefined
  const own = database.openListener?.(listenerName(database))
  const heard = (payload: string): void => {
    if (payload.startsWith(CONFIRMED)) listener.confirmed(payload.slice(CONFIRMED.length))
    else listener.changed(payload)
  }
  let subscription: postgres.ListenMeta
  try {
    subscription = await (own ?? database.sql).listen(pricesChangedChannel(database), heard, listener.connected)
  } catch (err) {
    await own?.end({ timeout: 0 })
    throw err
  }
  return async () => {
    await subscription.unlisten()
    await own?.end({ timeout: 1 })
  }
}
