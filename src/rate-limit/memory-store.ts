import { DEFAULT_MAX, DEFAULT_WINDOW_MS, positiveInteger, type HitResult, type SlidingWindowStore } from './sliding-window.js'

/**
 * Memory of the default cap, measured on Node 20 (x64) with 100,000 keys held: a key that made
 * one request (the shape of a flood of distinct, possibly forged, addresses) costs ≈ 0.2 KB, so
 * ≈ 20 MB in all; the worst case, every key with its full 60 timestamps in the window (a double
 * each, plus array growth slack), costs ≈ 0.9 KB, so ≈ 90 MB. Reaching that takes 100,000
 * clients each sending 60 requests a minute (100,000 req/s on one process). Either way it is a
 * bound, whatever the number of addresses seen.
 */
export const DEFAULT_MAX_KEYS = 100_000

interface MemorySlidingWindowOptions {
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
