import net from 'node:net'
import type postgres from 'postgres'
import { SETTINGS } from '../../config.js'
import type { DatabaseOptions } from '../client.js'

/** Server-side bounds set on every connection: nothing waits forever on the server (D47). */
const LOCK_TIMEOUT_MS = 5000
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000

export function postgresOptions (options: DatabaseOptions): postgres.Options<Record<string, postgres.PostgresType>> {
  // The ingest and the withdrawal raise the first two for their own transaction.
  const connection: Record<string, string> = {
    application_name: 'fuel-price-service',
    statement_timeout: String(options.statementTimeoutMs ?? SETTINGS.DB_STATEMENT_TIMEOUT_MS.default as number),
    lock_timeout: String(LOCK_TIMEOUT_MS),
    idle_in_transaction_session_timeout: String(IDLE_IN_TRANSACTION_TIMEOUT_MS)
  }
  if (options.schema !== undefined) connection.search_path = options.schema
  return {
    max: options.poolMax ?? SETTINGS.DB_POOL_MAX.default as number,
    idle_timeout: 30,
    keep_alive: 30, // TCP keepalive after 30 s of silence finds a connection the network lost
    connect_timeout: options.connectTimeoutSeconds ?? 5,
    fetch_types: false, // no array-type query at connect: it leaves the backend's heap thrashing (D56)
    connection,
    onnotice: () => {},
    ...{ socket: noDelaySockets() } // not in postgres.js's types, in its code (src/connection.js)
  }
}

/** The options of the one connection that LISTENs: named, so that a writer can count the replicas
 * that must confirm a change. */
export function listenerOptions (options: DatabaseOptions, applicationName: string): postgres.Options<Record<string, postgres.PostgresType>> {
  const pooled = postgresOptions(options)
  return { ...pooled, max: 1, connection: { ...pooled.connection, application_name: applicationName } }
}

interface SocketTarget { host: string[], port: number[], path?: string | false }

/** TCP_NODELAY sockets for postgres.js, which leaves Nagle on and so delays a COMMIT after COPY (D46). */
export function noDelaySockets (): (target: SocketTarget) => net.Socket {
  let next = 0
  return ({ host, port, path }) => {
    if (typeof path === 'string' && path !== '') return net.connect({ path })
    const i = next++ % host.length
    return net.connect({ host: host[i], port: port[i] ?? port[0] ?? 5432, noDelay: true })
  }
}
