import type { Config } from './config.js'

/** Time beyond the longest request for closing the database and Redis clients (D47). */
export const SHUTDOWN_MARGIN_MS = 10_000

/**
 * How long SIGTERM/SIGINT waits before the process is ended anyway: an in-flight request may run
 * its whole REQUEST_TIMEOUT_MS, then the pools close. close-with-grace's own default (10 s)
 * would cut a long upload off.
 */
export function shutdownDelayMs (config: Pick<Config, 'requestTimeoutMs'>): number {
  return config.requestTimeoutMs + SHUTDOWN_MARGIN_MS
}
