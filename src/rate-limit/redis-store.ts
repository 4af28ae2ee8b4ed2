import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { DEFAULT_MAX, DEFAULT_WINDOW_MS, positiveInteger, type HitResult, type SlidingWindowStore } from './sliding-window.js'

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

interface RedisSlidingWindowOptions {
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
  /** Called when a hit or a probe succeeds again after an outage. */
  onRecover?: () => void
  /** Consecutive failures that open the circuit (D47). */
  breakerThreshold?: number
  /** While the circuit is open, how often Redis is probed in the background (ms). */
  probeIntervalMs?: number
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
 *
 * D47 circuit breaker: a Redis that accepts connections but does not answer costs each command
 * its timeout. After `breakerThreshold` failures in a row the circuit opens: hits fail open at
 * once, without a command, while a background PING every `probeIntervalMs` waits for Redis to
 * answer again; its first answer closes the circuit.
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
  private failures = 0
  private readonly breakerThreshold: number
  private readonly probeIntervalMs: number
  private probe: NodeJS.Timeout | undefined
  private closed = false

  constructor (options: RedisSlidingWindowOptions) {
    this.redis = options.redis
    this.max = positiveInteger('max', options.max ?? DEFAULT_MAX)
    this.windowMs = positiveInteger('windowMs', options.windowMs ?? DEFAULT_WINDOW_MS)
    this.prefix = options.prefix ?? 'ratelimit:'
    this.now = options.now
    this.onError = options.onError ?? (() => {})
    this.onRecover = options.onRecover ?? (() => {})
    this.breakerThreshold = positiveInteger('breakerThreshold', options.breakerThreshold ?? 3)
    this.probeIntervalMs = positiveInteger('probeIntervalMs', options.probeIntervalMs ?? 1000)
    if (!(COMMAND_NAME in this.redis)) {
      this.redis.defineCommand(COMMAND_NAME, { numberOfKeys: 1, lua: HIT_SCRIPT })
    }
    this.command = (this.redis as unknown as Record<string, HitCommand>)[COMMAND_NAME] as HitCommand
    // Connection errors arrive as events too; listening keeps ioredis from printing
    // "Unhandled error event" on every reconnect attempt, and counts as the outage's report.
    this.redis.on('error', (err: unknown) => this.fail(err))
  }

  /** Whether hits skip Redis (the circuit is open). */
  get open (): boolean { return this.probe !== undefined }

  async hit (key: string): Promise<HitResult> {
    if (this.probe !== undefined) return this.failOpen()
    this.sequence = (this.sequence + 1) % Number.MAX_SAFE_INTEGER
    const member = `${this.instanceId}:${this.sequence.toString(36)}`
    const now = this.now === undefined ? '' : String(this.now())
    try {
      const [allowed, count, reset] = await this.command.call(
        this.redis, this.prefix + key, this.max, this.windowMs, member, now
      )
      this.recovered()
      return {
        allowed: allowed === 1,
        remaining: Math.max(0, this.max - count),
        resetMs: Math.max(0, reset)
      }
    } catch (err) {
      this.fail(err)
      if (++this.failures >= this.breakerThreshold && this.probe === undefined && !this.closed) this.scheduleProbe()
      return this.failOpen()
    }
  }

  async close (): Promise<void> {
    this.closed = true
    clearTimeout(this.probe)
    if (this.redis.status === 'end') return
    try {
      await this.redis.quit()
    } catch {
      this.redis.disconnect() // offline: QUIT cannot be sent, so just drop the socket
    }
  }

  private failOpen (): HitResult {
    return { allowed: true, remaining: this.max - 1, resetMs: this.windowMs }
  }

  private scheduleProbe (): void {
    this.probe = setTimeout(() => {
      this.redis.ping().then(() => {
        this.probe = undefined
        this.recovered()
      }, () => { if (!this.closed) this.scheduleProbe() })
    }, this.probeIntervalMs)
    this.probe.unref()
  }

  private recovered (): void {
    this.failures = 0
    if (!this.failing) return
    this.failing = false
    this.onRecover()
  }

  private fail (err: unknown): void {
    if (this.failing) return
    this.failing = true
    this.onError(err)
  }
}
