import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { DEFAULT_MAX, DEFAULT_WINDOW_MS, positiveInteger, type HitResult, type SlidingWindowStore } from './sliding-window.js'

/** One atomic sliding-log step; ARGV: max, windowMs, member, now (empty: Redis TIME).
 * Only an allowed request is added and renews the expiry. */
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
  prefix?: string
  /** Clock for request times; omitted, Redis TIME keeps all replicas on one clock. */
  now?: () => number
  /** Called once per outage (first failure after a success), never per request. */
  onError?: (err: unknown) => void
  onRecover?: () => void
  breakerThreshold?: number
  probeIntervalMs?: number
}

/** The sliding log shared by replicas, one Lua script per hit; fails open on Redis errors, behind a circuit breaker (D47). */
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
    // Listening stops ioredis printing "Unhandled error event" on every reconnect.
    this.redis.on('error', (err: unknown) => this.fail(err))
  }

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
