/** What the runner, wrk (bench/wrk.ts) and the bare-http ceiling (ceiling-http.ts) exchange. */

export interface LoadRequest {
  path: string
  headers?: Record<string, string>
}

export interface LoadResult {
  requests: number
  durationSec: number
  rps: number
  p50: number
  p99: number
  /** HTTP status → count, when the run counted them (soak, replicas); else empty. */
  statuses: Record<string, number>
  /** Answers other than 2xx/3xx (wrk counts them on every run). */
  non2xx3xx: number
  errors: number
  timeouts: number
  /** Next X-Forwarded-For number, so the next run's addresses never overlap this one's. */
  ipNext: number
}

/** One answer of the service, replayed byte for byte by ceiling-http.ts for the same request. */
export interface RecordedResponse {
  key: string
  status: number
  headers: Record<string, string>
  bodyBase64: string
}

/** What a recorded answer depends on: the URL and the two headers the scenarios differ by. */
export function ceilingKey (url: string, headers: Record<string, string | string[] | undefined>): string {
  const gzip = String(headers['accept-encoding'] ?? '').includes('gzip') ? 'gzip' : ''
  const revalidate = headers['if-none-match'] !== undefined ? 'inm' : ''
  return `${url} ${gzip} ${revalidate}`
}
