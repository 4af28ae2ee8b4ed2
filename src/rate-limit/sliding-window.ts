import { isIP } from 'node:net'

/**
 * D22: the rate limit is a *sliding log*. A request is allowed when fewer than `max` requests
 * from the same key were *allowed* in the trailing `windowMs`. A request made at time t counts
 * while `now < t + windowMs`. Rejected requests are never recorded, so hammering a blocked key
 * does not extend its block: once the oldest counted request ages out, exactly one more request
 * is allowed.
 */
export interface HitResult {
  allowed: boolean
  /** `max` minus the requests counted in the window after this one; never negative (59 after a first request). */
  remaining: number
  /** Milliseconds until the oldest counted request leaves the window (≥ 0); 0 when nothing is counted. */
  resetMs: number
}

export interface SlidingWindowStore {
  hit (key: string): Promise<HitResult>
  /** The same, answered synchronously, where the store can (memory): no promise per request. */
  hitSync? (key: string): HitResult
  close? (): Promise<void>
  /** The limits the store enforces, when it can say; the rate-limit plugin checks they agree with its headers. */
  readonly max?: number
  readonly windowMs?: number
}

/** D22 / spec section 8: 60 requests per 60 seconds per client. */
export const DEFAULT_MAX = 60
export const DEFAULT_WINDOW_MS = 60_000

/** A limiter setting: a positive whole number, or a RangeError naming it. */
export function positiveInteger (name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`)
  return value
}

/**
 * D48: the key a client is counted under: the address the trust rules selected (D23) when it is
 * an IP address (at most 45 characters), else the socket's address. A forged `X-Forwarded-For`
 * of kilobytes of text never becomes a key, so both stores stay bounded in bytes.
 */
export function clientKey (address: string | undefined, socketAddress: string | undefined): string {
  return address !== undefined && isIP(address) !== 0 ? address : socketAddress ?? 'unknown'
}
