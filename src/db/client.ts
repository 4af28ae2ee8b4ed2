import { mkdirSync } from 'node:fs'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import postgres from 'postgres'
import * as schema from './schema.js'

export type AppDb = PgDatabase<PgQueryResultHKT, typeof schema>

/**
 * The database behind the service: PostgreSQL through postgres.js when a URL is given, otherwise
 * the embedded PGlite (D28). Both are reached through the same Drizzle API; `statements()` counts
 * every statement sent to the driver, which is how tests prove that a cache hit reads nothing.
 */
export interface Database {
  readonly kind: 'pglite' | 'postgres'
  readonly db: AppDb
  /** postgres.js client (PostgreSQL mode only): LISTEN/NOTIFY and raw COPY-speed work. */
  readonly sql: postgres.Sql | undefined
  /** Schema the tables live in (a fresh one per test file on PostgreSQL), else undefined. */
  readonly schema: string | undefined
  statements: () => number
  /** Sees the text and parameters of every statement sent (tests read their plans). */
  onStatement: ((text: string, params: readonly unknown[]) => void) | undefined
  close: () => Promise<void>
}

export interface DatabaseOptions {
  /** postgres:// URL; unset means embedded PGlite. */
  url?: string | undefined
  /** PGlite data directory; 'memory://' keeps it in memory. */
  dataDir?: string
  /** PostgreSQL schema to use as search_path (tests). */
  schema?: string
  poolMax?: number
  statementTimeoutMs?: number
  /** Seconds to wait for a TCP connection before giving up (D27: fail fast, recover later). */
  connectTimeoutSeconds?: number
}

export async function openDatabase (options: DatabaseOptions): Promise<Database> {
  return options.url !== undefined ? openPostgres(options.url, options) : await openPglite(options)
}

function openPostgres (url: string, options: DatabaseOptions): Database {
  let count = 0
  const connection: Record<string, string> = {
    application_name: 'fuel-price-service',
    statement_timeout: String(options.statementTimeoutMs ?? 15000)
  }
  if (options.schema !== undefined) connection.search_path = options.schema
  const sql = postgres(url, {
    max: options.poolMax ?? 10,
    idle_timeout: 30,
    connect_timeout: options.connectTimeoutSeconds ?? 5,
    connection,
    onnotice: () => {},
    debug: (_connection: number, text: string, params: unknown[]) => {
      count++
      database.onStatement?.(text, params)
    }
  })
  const db = drizzlePostgres(sql, { schema }) as unknown as AppDb
  const database: Database = {
    kind: 'postgres',
    db,
    sql,
    schema: options.schema,
    statements: () => count,
    onStatement: undefined,
    close: async () => { await sql.end({ timeout: 5 }) }
  }
  return database
}

async function openPglite (options: DatabaseOptions): Promise<Database> {
  const dataDir = options.dataDir ?? 'memory://'
  if (!dataDir.includes('://')) mkdirSync(dataDir, { recursive: true })
  // Loaded only in this mode: PGlite's bundle is several MB that a PostgreSQL replica never needs.
  const [{ PGlite }, { drizzle: drizzlePglite }] = await Promise.all([import('@electric-sql/pglite'), import('drizzle-orm/pglite')])
  const client = await PGlite.create(dataDir)
  let count = 0
  // Count at the driver boundary, so nothing Drizzle sends is missed.
  const query = client.query.bind(client)
  const exec = client.exec.bind(client)
  const transaction = client.transaction.bind(client)
  client.query = ((...args: Parameters<typeof query>) => {
    count++
    database.onStatement?.(args[0], args[1] ?? [])
    return query(...args)
  }) as typeof client.query
  client.exec = ((...args: Parameters<typeof exec>) => { count++; return exec(...args) }) as typeof client.exec
  client.transaction = ((...args: Parameters<typeof transaction>) => { count++; return transaction(...args) }) as typeof client.transaction
  const db = drizzlePglite(client, { schema }) as unknown as AppDb
  const database: Database = {
    kind: 'pglite',
    db,
    sql: undefined,
    schema: undefined,
    statements: () => count,
    onStatement: undefined,
    close: async () => { if (!client.closed) await client.close() }
  }
  return database
}
