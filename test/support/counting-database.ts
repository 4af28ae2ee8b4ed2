import postgres from 'postgres'
import { createPglite, pgliteDatabase, postgresDatabase, type Database, type DatabaseOptions } from '../../src/db/client.js'
import { listenerOptions, postgresOptions } from '../../src/db/postgres/options.js'

/**
 * A Database that counts every statement sent to the driver (test-only): how tests prove that a
 * cache hit reads nothing, and how they read the statements an operation sends.
 */
export interface CountingDatabase extends Database {
  statements: () => number
  /** Sees the text and parameters of every statement sent. */
  onStatement: ((text: string, params: readonly unknown[]) => void) | undefined
}

export interface CountingDatabaseOptions extends DatabaseOptions {
  /** PGlite only: a dumped data directory to start from (the migrated template) instead of initdb. */
  loadDataDir?: Blob
}

export async function openCountingDatabase (options: CountingDatabaseOptions): Promise<CountingDatabase> {
  let count = 0
  const seen = (text: string, params: readonly unknown[]): void => {
    count++
    counting.onStatement?.(text, params)
  }
  let base: Database
  if (options.url !== undefined) {
    // postgres.js reports every query it sends through `debug`.
    const sql = postgres(options.url, { ...postgresOptions(options), debug: (_connection, text, params) => seen(text, params) })
    const url = options.url
    base = postgresDatabase(sql, options.schema, (name) => postgres(url, listenerOptions(options, name)))
  } else {
    // PGlite has no such hook: count at its three entry points, so nothing Drizzle sends is missed.
    const client = await createPglite(options.dataDir ?? 'memory://', { ...(options.loadDataDir !== undefined ? { loadDataDir: options.loadDataDir } : {}) })
    const query = client.query.bind(client)
    const exec = client.exec.bind(client)
    const transaction = client.transaction.bind(client)
    client.query = ((...args: Parameters<typeof query>) => {
      seen(args[0], args[1] ?? [])
      return query(...args)
    }) as typeof client.query
    client.exec = ((...args: Parameters<typeof exec>) => { count++; return exec(...args) }) as typeof client.exec
    // A transaction's statements go through its own object: seen there too.
    client.transaction = ((callback: Parameters<typeof transaction>[0]) => {
      count++
      return transaction(async (tx) => {
        const txQuery = tx.query.bind(tx)
        const txExec = tx.exec.bind(tx)
        tx.query = ((...args: Parameters<typeof txQuery>) => { seen(args[0], args[1] ?? []); return txQuery(...args) }) as typeof tx.query
        tx.exec = ((...args: Parameters<typeof txExec>) => { seen(args[0], []); return txExec(...args) }) as typeof tx.exec
        return await callback(tx)
      })
    }) as typeof client.transaction
    base = await pgliteDatabase(client)
  }
  const counting: CountingDatabase = { ...base, statements: () => count, onStatement: undefined }
  return counting
}
