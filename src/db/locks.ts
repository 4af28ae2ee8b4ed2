import { sql } from 'drizzle-orm'

// The service's advisory lock keys, in one list so no two are alike.

/** Replicas starting together take turns to migrate instead of racing on CREATE TABLE (held by the session). */
export const MIGRATION_LOCK_KEY = 7_305_531_001

/** One write of fuel_prices at a time: an ingest or a withdrawal holds it until its transaction ends. */
export const INGEST_LOCK_KEY = 7_305_531_002

/** How long a write waits for the ingest lock, and the longest an ingest's statements may run. */
export const INGEST_STATEMENT_TIMEOUT_MS = 300_000

export const TAKE_INGEST_LOCK = sql`SELECT pg_advisory_xact_lock(${INGEST_LOCK_KEY}::bigint)`
