import { isIP } from 'node:net'

/** A sliding log: only allowed requests are recorded, so hammering never extends a block (D22). */
export interface HitResult {
  allowed: boolean
  remaining: number
  /** Milliseconds until the oldest counted request leaves the window (≥ 0); 0 when nothing is counted. */
  resetMs: number
}

export interface SlidingWindowStore {
  hit (key: string): Promise<HitResult>
  /** The same, answered synchronously, where the store can (memory): no promise per request. */
  hitSync? (key: string): HitResult
  close? (): Promise<void>
  /** The limits the store enforces; the plugin takes them for its headers. */
  readonly max?: number
  readonly windowMs?: number
}

/** 60 requests per 60 s per client, as the specification asks. */
export const DEFAULT_MAX = 60
export const DEFAULT_WINDOW_MS = 60_000

export function positiveInteger (name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`)
  return value
}

/** The client's address (as TRUST_PROXY reads it) when it is an IP, else the socket's, so keys stay bounded. */
export function clientKey (address: string | undefined, socketAddress: string | undefined): string {
  return address !== undefined && isIP(address) !== 0 ? address : socketAddress ?? 'unknown'
}
