/**
 * What the runner and its child processes (load.ts, ceiling-sql.ts, ceiling-http.ts) exchange:
 * arguments go in as one JSON argv entry, results come back as one JSON line on stdout. The
 * children are separate processes so that the load generator and the ceilings never share an
 * event loop with the runner (or with each other).
 */

export interface LoadRequest {
  method?: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
}

export interface LoadArgs {
  url: string
  /** Cycled through in order by every connection (one entry = one scenario, several = a mix). */
  requests: LoadRequest[]
  connections: number
  durationSec: number
  warmupSec: number
  /** First X-Forwarded-For number; the child returns where it stopped so ranges never overlap. */
  ipStart: number
}

export interface LoadResult {
  requests: number
  durationSec: number
  rps: number
  p50: number
  p99: number
  /** HTTP status → count; anything else than the scenario's expected status is reported. */
  statuses: Record<string, number>
  errors: number
  timeouts: number
  ipNext: number
}

export type SqlScenario =
  | { kind: 'prices', limit: number, offset: number, town?: string }
  | { kind: 'towns' }

export interface SqlArgs {
  dbUrl: string
  scenario: SqlScenario
  concurrency: number
  /** The service's DB_POOL_MAX: the raw loop gets the same number of connections. */
  poolMax: number
  durationSec: number
  warmupSec: number
  /** The service path answering the same question: rows must be identical before timing. */
  check: { serviceUrl: string, path: string, forwardedFor: string }
}

export interface SqlResult {
  queries: number
  durationSec: number
  qps: number
  p50: number
  p99: number
  sqlText: string
  params: unknown[]
}

/** One answer of the service, replayed byte for byte by ceiling-http.ts. */
export interface RecordedResponse {
  status: number
  headers: Record<string, string>
  bodyBase64: string
}

export interface HttpVariants {
  all: RecordedResponse
  town: RecordedResponse
  gzip: RecordedResponse
  notModified: RecordedResponse
}

/** 10.0.0.0/8 from a counter: a distinct client address per request (16.7 M before reuse). */
export function forwardedFor (n: number): string {
  return `10.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`
}
