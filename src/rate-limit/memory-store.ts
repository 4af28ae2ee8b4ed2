import { DEFAULT_MAX, DEFAULT_WINDOW_MS, positiveInteger, type HitResult, type SlidingWindowStore } from './sliding-window.js'

/** Bounded memory: at most this many keys, least recently seen evicted first. */
export const DEFAULT_MAX_KEYS = 100_000

interface MemorySlidingWindowOptions {
  max?: number
  windowMs?: number
  maxKeys?: number
  now?: () => number
}

/** At most this many expired entries are swept per hit, so no single request pays for a big sweep. */
const SWEEP_PER_HIT = 64

/** No slot: the end of the recency list. */
const NONE = -1

/**
 * Each key holds a slot; the recency list (head = least recently seen), the last hit and a log of
 * one time live in typed arrays by slot, and only a key with two or more times in the window has
 * an array of its own. So a key costs its Map entry, its string and ~24 bytes, not an object, an
 * array and a boxed number each: a flood of distinct addresses fills the 100,000 keys with half
 * the heap, and sweeping and evicting stay O(1).
 */
export class MemorySlidingWindowStore implements SlidingWindowStore {
  readonly max: number
  readonly windowMs: number
  readonly maxKeys: number
  private readonly now: () => number
  private readonly slots = new Map<string, number>()
  /** Slot → key, to forget a key when its slot is swept or evicted. */
  private readonly keys: string[] = []
  private lastSeen = new Float64Array(0)
  /** The key's only time in the window, while its log holds one. */
  private onlyTime = new Float64Array(0)
  private prev = new Int32Array(0)
  private next = new Int32Array(0)
  /** The log of a key with two or more times in the window, oldest first. */
  private readonly logs = new Map<number, number[]>()
  private readonly freeSlots: number[] = []
  private head = NONE
  private tail = NONE

  constructor (options: MemorySlidingWindowOptions = {}) {
    this.max = positiveInteger('max', options.max ?? DEFAULT_MAX)
    this.windowMs = positiveInteger('windowMs', options.windowMs ?? DEFAULT_WINDOW_MS)
    this.maxKeys = positiveInteger('maxKeys', options.maxKeys ?? DEFAULT_MAX_KEYS)
    this.now = options.now ?? Date.now
  }

  get size (): number {
    return this.slots.size
  }

  async hit (key: string): Promise<HitResult> {
    return this.hitSync(key)
  }

  hitSync (key: string): HitResult {
    const now = this.now()
    const cutoff = now - this.windowMs
    this.sweep(cutoff)

    let slot = this.slots.get(key)
    if (slot === undefined) {
      if (this.slots.size >= this.maxKeys && this.head !== NONE) this.remove(this.head)
      slot = this.take(key)
      this.lastSeen[slot] = now
      this.onlyTime[slot] = now
      return { allowed: true, remaining: this.max - 1, resetMs: this.windowMs }
    }
    this.lastSeen[slot] = now
    this.unlink(slot)
    this.append(slot)

    const log = this.logs.get(slot)
    if (log === undefined) {
      const only = this.onlyTime[slot] as number
      if (only <= cutoff) {
        this.onlyTime[slot] = now
        return { allowed: true, remaining: this.max - 1, resetMs: this.windowMs }
      }
      const allowed = this.max > 1
      if (allowed) this.logs.set(slot, [only, now])
      return { allowed, remaining: Math.max(0, this.max - (allowed ? 2 : 1)), resetMs: this.resetMs(only, now) }
    }
    pruneTimes(log, cutoff)
    const allowed = log.length < this.max
    if (allowed) log.push(now)
    const oldest = log[0] as number
    if (log.length === 1) {
      this.onlyTime[slot] = oldest
      this.logs.delete(slot)
    }
    return { allowed, remaining: Math.max(0, this.max - log.length), resetMs: this.resetMs(oldest, now) }
  }

  async close (): Promise<void> {
    this.slots.clear()
    this.logs.clear()
    this.keys.length = 0
    this.freeSlots.length = 0
    this.head = this.tail = NONE
  }

  // Clamped: if the clock stepped back, a stored time can lie "in the future".
  private resetMs (oldest: number, now: number): number {
    return Math.min(this.windowMs, Math.max(0, oldest + this.windowMs - now))
  }

  private sweep (cutoff: number): void {
    for (let budget = SWEEP_PER_HIT; budget > 0; budget--) {
      const oldest = this.head
      if (oldest === NONE || (this.lastSeen[oldest] as number) > cutoff) return
      this.remove(oldest)
    }
  }

  /** A slot for a new key, at the end of the recency list; the arrays double when full. */
  private take (key: string): number {
    let slot = this.freeSlots.pop()
    if (slot === undefined) {
      slot = this.keys.length
      if (slot === this.lastSeen.length) this.grow(Math.min(Math.max(64, slot * 2), this.maxKeys))
    }
    this.keys[slot] = key
    this.slots.set(key, slot)
    this.append(slot)
    return slot
  }

  private grow (capacity: number): void {
    const widen = <A extends Float64Array | Int32Array>(from: A, to: A): A => { to.set(from); return to }
    this.lastSeen = widen(this.lastSeen, new Float64Array(capacity))
    this.onlyTime = widen(this.onlyTime, new Float64Array(capacity))
    this.prev = widen(this.prev, new Int32Array(capacity))
    this.next = widen(this.next, new Int32Array(capacity))
  }

  private remove (slot: number): void {
    this.unlink(slot)
    this.slots.delete(this.keys[slot] as string)
    this.keys[slot] = '' // the key's string is free to go
    this.logs.delete(slot)
    this.freeSlots.push(slot)
  }

  private append (slot: number): void {
    this.prev[slot] = this.tail
    this.next[slot] = NONE
    if (this.tail === NONE) this.head = slot
    else this.next[this.tail] = slot
    this.tail = slot
  }

  private unlink (slot: number): void {
    const prev = this.prev[slot] as number
    const next = this.next[slot] as number
    if (prev === NONE) this.head = next
    else this.next[prev] = next
    if (next === NONE) this.tail = prev
    else this.prev[next] = prev
  }
}

function pruneTimes (times: number[], cutoff: number): void {
  let i = 0
  while (i < times.length && (times[i] as number) <= cutoff) i++
  if (i > 0) times.splice(0, i)
}
