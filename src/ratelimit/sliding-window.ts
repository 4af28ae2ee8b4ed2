import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'

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
  close? (): Promise<void>
  /** The limits the store enforces, when it can say; the rate-limit plugin checks they agree with its headers. */
  readonly max?: number
  readonly windowMs?: number
}

/** D22 / spec section 8: 60 requests per 60 seconds per client. */
export const DEFAULT_MAX = 60
export const DEFAULT_WINDOW_MS = 60_000

/**
 * Memory of the default cap, measured on Node 20 (x64) with 100,000 keys held: a key that made
 * one request (the shape of a flood of distinct, possibly forged, addresses) costs ≈ 0.2 KB, so
 * ≈ 20 MB in all; the worst case, every key with its full 60 timestamps in the window (a double
 * each, plus array growth slack), costs ≈ 0.9 KB, so ≈ 90 MB. Reaching that takes 100,000
 * clients each sending 60 requests a minute (100,000 req/s on one process). Either way it is a
 * bound, whatever the number of addresses seen.
 */
export const DEFAULT_MAX_KEYS = 100_000

export interface MemorySlidingWindowOptions {
  max?: number
  windowMs?: number
  /** D22 "memory stays bounded": at most this many keys are held; least recently used go first. */
  maxKeys?: number
  now?: () => number
}

/** One key's log, also a node of the recency list (head = least recently seen). */
interface MemoryEntry {
  key: string
  /** Allowed request times, ascending; pruned to the window on every hit. At most `max` long. */
  times: number[]
  /** Last time the key was seen (allowed or not); the list is kept in this order. */
  lastSeen: number
  prev: MemoryEntry | undefined
  next: MemoryEntry | undefined
}

/** At most this many expired entries are swept per hit, so no single request pays for a big sweep. */
const SWEEP_PER_HIT = 64

/**
 * One process's sliding log (used when REDIS_URL is unset). A Map finds a key's entry; a doubly
 * linked list through the entries keeps them in order of last hit, so both clean-ups are O(1)
 * from its head: entries whose last hit has left the window (all their timestamps have, too)
 * are swept, and when more than `maxKeys` keys are held the least recently seen is evicted.
 * (Re-inserting into the Map to keep its own order would leave deleted slots at its front that
 * every later front iteration walks over: quadratic under a flood.) No timers are involved.
 *
 * Evicting a still-active key hands that client a fresh allowance; that only happens when more
 * than `maxKeys` distinct clients were seen within one window, and it is the price of the memory
 * bound D22 asks for.
 */
export class MemorySlidingWindowStore implements SlidingWindowStore {
  readonly max: number
  readonly windowMs: number
  readonly maxKeys: number
  private readonly now: () => number
  private readonly entries = new Map<string, MemoryEntry>()
  private head: MemoryEntry | undefined
  private tail: MemoryEntry | undefined

  constructor (options: MemorySlidingWindowOptions = {}) {
    this.max = positiveInteger('max', options.max ?? DEFAULT_MAX)
    this.windowMs = positiveInteger('windowMs', options.windowMs ?? DEFAULT_WINDOW_MS)
    this.maxKeys = positiveInteger('maxKeys', options.maxKeys ?? DEFAULT_MAX_KEYS)
    this.now = options.now ?? Date.now
  }

  /** Number of keys held (for tests and metrics). */
  get size (): number {
    return this.entries.size
  }

  async hit (key: string): Promise<HitResult> {
    return this.hitSync(key)
  }

  hitSync (key: string): HitResult {
    const now = this.now()
    const cutoff = now - this.windowMs
    this.sweep(cutoff)

    let entry = this.entries.get(key)
    if (entry === undefined) {
      // A literal of one element: `[]` followed by push() would reserve 17 slots, and under a
      // flood of distinct addresses nearly every entry holds exactly one timestamp.
      entry = { key, times: [now], lastSeen: now, prev: undefined, next: undefined }
      this.entries.set(key, entry)
      this.append(entry)
      if (this.entries.size > this.maxKeys && this.head !== undefined) this.remove(this.head)
      return { allowed: true, remaining: this.max - 1, resetMs: this.windowMs }
    } else {
      pruneTimes(entry.times, cutoff)
      entry.lastSeen = now
      this.unlink(entry)
      this.append(entry)
    }

    const times = entry.times
    const allowed = times.length < this.max
    if (allowed) times.push(now)
    const oldest = times[0]
    return {
      allowed,
      remaining: Math.max(0, this.max - times.length),
      // Clamped: if the clock stepped back, a stored time can lie "in the future".
      resetMs: oldest === undefined ? 0 : Math.min(this.windowMs, Math.max(0, oldest + this.windowMs - now))
    }
  }

  async close (): Promise<void> {
    this.entries.clear()
    this.head = this.tail = undefined
  }

  /** Drops keys whose last hit has left the window, starting from the least recently seen. */
  private sweep (cutoff: number): void {
    for (let budget = SWEEP_PER_HIT; budget > 0; budget--) {
      const oldest = this.head
      if (oldest === undefined || oldest.lastSeen > cutoff) return
      this.remove(oldest)
    }
  }

  private remove (entry: MemoryEntry): void {
    this.unlink(entry)
    this.entries.delete(entry.key)
  }

  private append (entry: MemoryEntry): void {
    entry.prev = this.tail
    entry.next = undefined
    if (this.tail === undefined) this.head = entry
    else this.tail.next = entry
    this.tail = entry
  }

  private unlink (entry: MemoryEntry): void {
    if (entry.prev === undefined) this.head = entry.next
    else entry.prev.next = entry.next
    if (entry.next === undefined) this.tail = entry.prev
    else entry.next.prev = entry.prev
    entry.prev = entry.next = undefined
  }
}

/** Removes the timestamps at or before `cutoff` (they are sorted ascending). */
function pruneTimes (times: number[], cutoff: number): void {
  let i = 0
  while (i < times.length && (times[i] as number) <= cutoff) i++
  if (i > 0) times.splice(0, i)
}

function positiveInteger (name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`)
  return value
}

/**
 * One atomic step of the sliding log over a sorted set whose scores are request times (ms).
 * KEYS[1] the client's set; ARGV: max, windowMs, a unique member, now (ms; empty = Redis TIME).
 * Returns { allowed 0/1, count in window after this request, ms until the oldest leaves }
 * (clamped to the window: replicas passing their own clocks may disagree by a few ms).
 * Only an allowed request is added and only it renews the key's expiry (D22: rejections do not
 * extend the block); the set expires exactly when its newest request leaves the window.
 */
const HIT_SCRIPT = `
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < max then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + 1
  allowed = 1
end
local reset = 0
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if oldest[2] then
  reset = math.min(window, math.max(0, math.ceil(tonumber(oldest[2]) + window - now)))
end
return { allowed, count, reset }
`

const COMMAND_NAME = 'fuelRateLimitHit'

type HitCommand = (key: string, max: number, windowMs: number, member: string, now: string) => Promise<[number, number, number]>

export interface RedisSlidingWindowOptions {
  /** The store takes ownership: `close()` quits it. Build it with `createRedisClient`. */
  redis: Redis
  max?: number
  windowMs?: number
  /** Key prefix; keys are `<prefix><client key>`. */
  prefix?: string
  /**
   * Clock for request times. Omitted, the script reads Redis's own TIME, so replicas whose
   * clocks drift apart still share one consistent window. Tests inject a fake clock.
   */
  now?: () => number
  /** Called once per outage (first failure after a success), never per request. */
  onError?: (err: unknown) => void
  /** Called when a hit succeeds again after an outage. */
  onRecover?: () => void
}

/**
 * The shared sliding log: every replica pointed at the same Redis shares one allowance per
 * client (D22). The whole check-and-record is one Lua script (EVALSHA through ioredis'
 * `defineCommand`, which falls back to EVAL on NOSCRIPT), so concurrent requests cannot both
 * take the last slot.
 *
 * Fail open: when Redis errors or is unreachable the request is allowed, reported as a fresh
 * window (`remaining: max - 1`, `resetMs: windowMs`), because refusing every client for an
 * infrastructure fault would turn a Redis outage into an API outage. The client built by
 * `createRedisClient` does not queue commands while offline, so these answers are immediate,
 * and it reconnects by itself; the next successful hit ends the outage.
 */
export class RedisSlidingWindowStore implements SlidingWindowStore {
  readonly max: number
  readonly windowMs: number
  private readonly redis: Redis
  private readonly prefix: string
  private readonly now: (() => number) | undefined
  private readonly onError: (err: unknown) => void
  private readonly onRecover: () => void
  private readonly command: HitCommand
  /** Members need only be unique per key and window: a per-instance id and a counter. */
  private readonly instanceId = randomBytes(6).toString('base64url')
  private sequence = 0
  private failing = false

  constructor (options: RedisSlidingWindowOptions) {
    this.redis = options.redis
    this.max = positiveInteger('max', options.max ?? DEFAULT_MAX)
    this.windowMs = positiveInteger('windowMs', options.windowMs ?? DEFAULT_WINDOW_MS)
    this.prefix = options.prefix ?? 'ratelimit:'
    this.now = options.now
    this.onError = options.onError ?? (() => {})
    this.onRecover = options.onRecover ?? (() => {})
    if (!(COMMAND_NAME in this.redis)) {
      this.redis.defineCommand(COMMAND_NAME, { numberOfKeys: 1, lua: HIT_SCRIPT })
    }
    this.command = (this.redis as unknown as Record<string, HitCommand>)[COMMAND_NAME] as HitCommand
    // Connection errors arrive as events too; listening keeps ioredis from printing
    // "Unhandled error event" on every reconnect attempt, and counts as the outage's report.
    this.redis.on('error', (err: unknown) => this.fail(err))
  }

  async hit (key: string): Promise<HitResult> {
    this.sequence = (this.sequence + 1) % Number.MAX_SAFE_INTEGER
    const member = `${this.instanceId}:${this.sequence.toString(36)}`
    const now = this.now === undefined ? '' : String(this.now())
    try {
      const [allowed, count, reset] = await this.command.call(
        this.redis, this.prefix + key, this.max, this.windowMs, member, now
      )
      if (this.failing) {
        this.failing = false
        this.onRecover()
      }
      return {
        allowed: allowed === 1,
        remaining: Math.max(0, this.max - count),
        resetMs: Math.max(0, reset)
      }
    } catch (err) {
      this.fail(err)
      return { allowed: true, remaining: this.max - 1, resetMs: this.windowMs }
    }
  }

  async close (): Promise<void> {
    if (this.redis.status === 'end') return
    try {
      await this.redis.quit()
    } catch {
      this.redis.disconnect() // offline: QUIT cannot be sent, so just drop the socket
    }
  }

  private fail (err: unknown): void {
    if (this.failing) return
    this.failing = true
    this.onError(err)
  }
}
