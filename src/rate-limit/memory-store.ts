import { DEFAULT_MAX, DEFAULT_WINDOW_MS, positiveInteger, type HitResult, type SlidingWindowStore } from './sliding-window.js'

/** Bounded memory: at most this many keys, least recently seen evicted first. */
export const DEFAULT_MAX_KEYS = 100_000

interface MemorySlidingWindowOptions {
  max?: number
  windowMs?: number
  maxKeys?: number
  now?: () => number
}

/** One key's log, also a node of the recency list (head = least recently seen). */
interface MemoryEntry {
  key: string
  times: number[]
  lastSeen: number
  prev: MemoryEntry | undefined
  next: MemoryEntry | undefined
}

/** At most this many expired entries are swept per hit, so no single request pays for a big sweep. */
const SWEEP_PER_HIT = 64

/** A Map plus a list in order of last hit, so sweeping and evicting are O(1) (reordering the Map degrades under a flood). */
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
      // A one-element literal: `[]` + push() reserves 17 slots, and most entries hold one time.
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

function pruneTimes (times: number[], cutoff: number): void {
  let i = 0
  while (i < times.length && (times[i] as number) <= cutoff) i++
  if (i > 0) times.splice(0, i)
}
