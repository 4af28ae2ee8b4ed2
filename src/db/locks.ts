import { sql } from 'drizzle-orm'
import type { Database } from './client.js'

// The service's advisory lock keys, in one list so no two are alike.

/** Replicas starting together take turns to migrate instead of racing on CREATE TABLE (held by the session). */
export const MIGRATION_LOCK_KEY = 7_305_531_001

/** One write of fuel_prices at a time: an ingest or a withdrawal holds it until its transaction ends. */
export const INGEST_LOCK_KEY = 7_305_531_002

/** How long a write waits for the ingest lock, and the longest an ingest's statements may run. */
export const INGEST_STATEMENT_TIMEOUT_MS = 300_000

/** The ingest lock was not free within the wait; nothing was written. */
export class IngestLockBusy extends Error {
  constructor (readonly waitedMs: number) {
    super(`the ingest lock was not free within ${waitedMs} ms`)
    this.name = 'IngestLockBusy'
  }
}

/**
 * Waits up to `waitMs` for the ingest lock, past the connection's 5 s lock_timeout, then bounds the
 * transaction's statements by `statementTimeoutMs` (default: the connection's own again).
 */
export async function takeIngestLock (tx: { execute: Database['db']['execute'] }, waitMs: number, statementTimeoutMs?: number): Promise<void> {
  await tx.execute(sql`SELECT set_config('lock_timeout', ${String(waitMs)}, true), set_config('statement_timeout', ${String(waitMs)}, true)`)
  try {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${INGEST_LOCK_KEY}::bigint)`)
  } catch (err) {
    throw waitedTooLong(err) ? new IngestLockBusy(waitMs) : err
  }
  await tx.execute(statementTimeoutMs === undefined
    ? sql`SELECT set_config('statement_timeout', reset_val, true) FROM pg_settings WHERE name = 'statement_timeout'`
    : sql`SELECT set_config('statement_timeout', ${String(statementTimeoutMs)}, true)`)
}

/** lock_timeout (55P03) or statement_timeout (57014) ended the wait; drizzle wraps the driver's error. */
function waitedTooLong (err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (code === '55P03' || code === '57014') return true
  }
  return false
}
