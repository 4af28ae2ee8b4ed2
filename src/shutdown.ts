import type { Config } from './config.js'

/** Time beyond the longest request for closing the database and Redis clients (D47). */
export const SHUTDOWN_MARGIN_MS = 10_000

/** How long a shutdown waits: a request may run its whole REQUEST_TIMEOUT_MS, then the pools close. */
export function shutdownDelayMs (config: Pick<Config, 'requestTimeoutMs'>): number {
  return config.requestTimeoutMs + SHUTDOWN_MARGIN_MS
}
