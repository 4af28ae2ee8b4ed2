import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import type { PGlite } from '@electric-sql/pglite'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import postgres from 'postgres'
import { lockDataDir } from './data-dir-lock.js'
import { listenerOptions, postgresOptions } from './postgres/options.js'
import { initPgliteDataDir, pgliteStartParams } from './pglite-memory.js'
import { stopAfterPanic } from './pglite-panic.js'
import * as schema from './schema.js'

export type AppDb = PgDatabase<PgQueryResultHKT, typeof schema>

/** PostgreSQL (postgres.js) when a URL is given, else the embedded PGlite, both through Drizzle. */
export interface Database {
  readonly kind: 'pglite' | 'postgres'
  readonly db: AppDb
  /** postgres.js client (PostgreSQL mode only): NOTIFY and COPY. */
  readonly sql: postgres.Sql | undefined
  /** PostgreSQL mode only: a client of its own for LISTEN, its connection named as given. */
  readonly openListener: ((applicationName: string) => postgres.Sql) | undefined
  readonly schema: string | undefined
  close: () => Promise<void>
}

export interface DatabaseOptions {
  url?: string | undefined
  /** PGlite data directory; 'memory://' keeps it in memory. */
  dataDir?: string
  schema?: string
  poolMax?: number
  statementTimeoutMs?: number
  /** TCP connect timeout in seconds: a database that is down fails the request fast, and the next one retries (D27). */
  connectTimeoutSeconds?: number
}

export async function openDatabase (options: DatabaseOptions): Promise<Database> {
  const url = options.url
  if (url !== undefined) {
    return postgresDatabase(postgres(url, postgresOptions(options)), options.schema, (name) => postgres(url, listenerOptions(options, name)))
  }
  const dataDir = options.dataDir ?? 'memory://'
  // One process at a time on a data directory: PGlite takes no lock of its own.
  const lock = dataDir.includes('://') ? undefined : lockDataDir(dataDir)
  try {
    const database = await pgliteDatabase(await createPglite(dataDir))
    if (lock === undefined) return database
    return { ...database, close: async () => { try { await database.close() } finally { lock.release() } } }
  } catch (err) {
    lock?.release()
    throw err
  }
}

/** Without `openListener`, LISTEN shares `sql`'s own listening connection, which writers do not count. */
export function postgresDatabase (sql: postgres.Sql, schemaName?: string, openListener?: (applicationName: string) => postgres.Sql): Database {
  return {
    kind: 'postgres',
    db: drizzlePostgres(sql, { schema }) as unknown as AppDb,
    sql,
    openListener,
    schema: schemaName,
    close: async () => { await sql.end({ timeout: 5 }) }
  }
}

export interface PgliteCreateOptions {
  /** A data directory dumped by PGlite's dumpDataDir, loaded instead of running initdb (tests' migrated template). */
  loadDataDir?: Blob
}

export async function createPglite (dataDir: string, options: PgliteCreateOptions = {}): Promise<PGlite> {
  const onDisk = !dataDir.includes('://')
  if (onDisk) mkdirSync(dataDir, { recursive: true })
  // V8's baseline WebAssembly compiler only, which keeps PGlite's memory down; set before the first compilation (D36).
  setFlagsFromString('--liftoff-only')
  // initdb runs in a short-lived child process, so its peak memory goes back to the system.
  if (onDisk && !existsSync(join(dataDir, 'PG_VERSION'))) await initPgliteDataDir(dataDir)
  // Loaded only in this mode: PGlite's bundle is several MB that a PostgreSQL replica never needs.
  const { PGlite } = await import('@electric-sql/pglite')
  return await PGlite.create(dataDir, {
    startParams: pgliteStartParams(PGlite.defaultStartParams),
    ...(options.loadDataDir !== undefined ? { loadDataDir: options.loadDataDir } : {})
  })
}

export async function pgliteDatabase (client: PGlite): Promise<Database> {
  const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite')
  return {
    kind: 'pglite',
    db: drizzlePglite(stopAfterPanic(client), { schema }) as unknown as AppDb,
    sql: undefined,
    openListener: undefined,
    schema: undefined,
    close: async () => { if (!client.closed) await client.close() }
  }
}

/** postgres.js returns an array of rows, PGlite an object with `rows`. */
export function rowsOf<T> (result: unknown): T[] {
  return Array.isArray(result) ? result as T[] : (result as { rows: T[] }).rows
}
