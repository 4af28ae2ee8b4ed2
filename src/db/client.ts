import { existsSync, mkdirSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import type { PGlite } from '@electric-sql/pglite'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import postgres from 'postgres'
import { lockDataDir } from './data-dir-lock.js'
import { initPgliteDataDir, pgliteStartParams } from './pglite-memory.js'
import * as schema from './schema.js'

export type AppDb = PgDatabase<PgQueryResultHKT, typeof schema>

/**
 * The database behind the service: PostgreSQL through postgres.js when a URL is given, otherwise
 * the embedded PGlite (D28). Both are reached through the same Drizzle API.
 */
export interface Database {
  readonly kind: 'pglite' | 'postgres'
  readonly db: AppDb
  /** postgres.js client (PostgreSQL mode only): LISTEN/NOTIFY and COPY. */
  readonly sql: postgres.Sql | undefined
  /** Schema the tables live in (a fresh one per test file on PostgreSQL), else undefined. */
  readonly schema: string | undefined
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
  if (options.url !== undefined) return postgresDatabase(postgres(options.url, postgresOptions(options)), options.schema)
  const dataDir = options.dataDir ?? 'memory://'
  // D33: one process at a time on a data directory; PGlite takes no lock of its own.
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

/** D47: the server-side bounds set on every connection. */
export const LOCK_TIMEOUT_MS = 5000
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000

/** How the service connects to PostgreSQL: pool size, timeouts, and the search_path for tests. */
export function postgresOptions (options: DatabaseOptions): postgres.Options<Record<string, postgres.PostgresType>> {
  // D47: no statement waits forever on the server: a statement, a lock wait and a transaction
  // left idle are each bounded (the ingest raises the first two for its own transaction).
  const connection: Record<string, string> = {
    application_name: 'fuel-price-service',
    statement_timeout: String(options.statementTimeoutMs ?? 15000),
    lock_timeout: String(LOCK_TIMEOUT_MS),
    idle_in_transaction_session_timeout: String(IDLE_IN_TRANSACTION_TIMEOUT_MS)
  }
  if (options.schema !== undefined) connection.search_path = options.schema
  return {
    max: options.poolMax ?? 10,
    idle_timeout: 30,
    keep_alive: 30, // D47: TCP keepalive after 30 s of silence finds a connection the network lost
    connect_timeout: options.connectTimeoutSeconds ?? 5,
    connection,
    onnotice: () => {},
    ...{ socket: noDelaySockets() } // not in postgres.js's types, in its code (src/connection.js)
  }
}

/** What postgres.js passes to its (untyped) `socket` option: the parsed connection options. */
interface SocketTarget { host: string[], port: number[], path?: string | false }

/**
 * postgres.js's TCP connections with Nagle's algorithm off (TCP_NODELAY), which postgres.js
 * leaves on. With it on, a small message sent after a large one (COPY's CopyDone, the RELEASE or
 * COMMIT after a COPY) waits for the server's delayed ACK: ~40 ms on Linux, a third of a
 * 20,000-row ingest (issue 12, D46). Through postgres.js's `socket` option, which expects a
 * connected socket: this one is returned while it connects (the first write waits in Node's
 * buffer; a failure is the socket's 'error', as with postgres.js's own). Like postgres.js, each
 * new connection goes to the next of several hosts; a Unix socket path needs no TCP option.
 */
export function noDelaySockets (): (target: SocketTarget) => net.Socket {
  let next = 0
  return ({ host, port, path }) => {
    if (typeof path === 'string' && path !== '') return net.connect({ path })
    const i = next++ % host.length
    return net.connect({ host: host[i], port: port[i] ?? port[0] ?? 5432, noDelay: true })
  }
}

/** A Database over a postgres.js client, which it closes. */
export function postgresDatabase (sql: postgres.Sql, schemaName?: string): Database {
  return {
    kind: 'postgres',
    db: drizzlePostgres(sql, { schema }) as unknown as AppDb,
    sql,
    schema: schemaName,
    close: async () => { await sql.end({ timeout: 5 }) }
  }
}

/** An embedded PGlite in `dataDir` (created if needed), or in memory for 'memory://'. */
export async function createPglite (dataDir: string): Promise<PGlite> {
  const onDisk = !dataDir.includes('://')
  if (onDisk) mkdirSync(dataDir, { recursive: true })
  // D36: V8's optimising tier would compile PGlite's 9 MB of WASM a second time (~70 MB of code);
  // the baseline compiler alone is enough for this workload. Set before the first compilation.
  setFlagsFromString('--liftoff-only')
  // D36: a new directory is created by initdb in a short-lived child process: initdb runs in a
  // second PGlite instance (~750 MB at its peak), 300-500 MB of which would stay with the service.
  if (onDisk && !existsSync(join(dataDir, 'PG_VERSION'))) await initPgliteDataDir(dataDir)
  // Loaded only in this mode: PGlite's bundle is several MB that a PostgreSQL replica never needs.
  const { PGlite } = await import('@electric-sql/pglite')
  return await PGlite.create(dataDir, { startParams: pgliteStartParams(PGlite.defaultStartParams) })
}

/** A Database over a PGlite client, which it closes. */
export async function pgliteDatabase (client: PGlite): Promise<Database> {
  const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite')
  return {
    kind: 'pglite',
    db: drizzlePglite(client, { schema }) as unknown as AppDb,
    sql: undefined,
    schema: undefined,
    close: async () => { if (!client.closed) await client.close() }
  }
}

/** postgres.js returns an array of rows, PGlite an object with `rows`. */
export function rowsOf<T> (result: unknown): T[] {
  return Array.isArray(result) ? result as T[] : (result as { rows: T[] }).rows
}
