import type { LatestRecords } from '../db/prices.js'
import { normalizeTown } from '../domain/town.js'
import { CachedBody } from '../http-caching/cached-body.js'

interface ReadCacheOptions {
  loadLatest: () => Promise<LatestRecords>
  /** Bound on the bytes of the other bodies held (the latest cycle is always kept). */
  maxBytes: number
}

interface LatestCycle {
  all: CachedBody
  /** Each town's record as JSON, by canonical name; its body is made when that town is first asked for. */
  records: Map<string, string>
  byTown: Map<string, CachedBody>
}

interface Entry { body: CachedBody, bytes: number }

const EMPTY_LIST = new CachedBody('[]')

/** Every read's answer, kept in memory until the next write (D44). `clear()` starts a new generation,
 * so a load begun before it never installs its stale result. */
export class ReadCache {
  private latestCycle: LatestCycle | undefined
  private latestLoading: Promise<LatestCycle> | undefined
  private readonly entries = new Map<string, Entry>()
  private readonly loading = new Map<string, Promise<CachedBody>>()
  private generation = 0
  private lastUsed: string | undefined
  private heldBytes = 0
  latestHits = 0
  latestMisses = 0
  otherHits = 0
  otherMisses = 0

  constructor (private readonly options: ReadCacheOptions) {}

  /** The latest cycle's records, or one town's (`[]` for an unknown town, spec 4.2 rule 4); `town` in its canonical form (townFilter). */
  async latest (town: string | undefined): Promise<CachedBody> {
    let cycle = this.latestCycle
    if (cycle !== undefined) {
      this.latestHits++
    } else {
      this.latestMisses++
      cycle = await this.loadLatest()
    }
    return town === undefined ? cycle.all : cycle.byTown.get(town) ?? townBody(cycle, town)
  }

  /** The body kept under `key`, or `load`'s text, kept under it from now on. Concurrent misses share one load. */
  async body (key: string, load: () => Promise<string>): Promise<CachedBody> {
    const entry = this.entries.get(key)
    if (entry !== undefined) {
      this.otherHits++
      // Re-inserted, so the Map's order is the order of use; a key already last is left alone.
      if (this.lastUsed !== key) {
        this.entries.delete(key)
        this.entries.set(key, entry)
        this.lastUsed = key
      }
      return entry.body
    }
    this.otherMisses++
    let pending = this.loading.get(key)
    if (pending === undefined) {
      const generation = this.generation
      pending = load().then((text) => {
        const body = new CachedBody(text)
        if (this.generation === generation) this.store(key, body)
        return body
      }).finally(() => {
        if (this.loading.get(key) === pending) this.loading.delete(key)
      })
      this.loading.set(key, pending)
    }
    return await pending
  }

  /** Drops everything; called after every committed write, here or on another replica. */
  clear (): void {
    this.generation++
    this.latestCycle = undefined
    this.latestLoading = undefined
    this.entries.clear()
    this.lastUsed = undefined
    this.loading.clear()
    this.heldBytes = 0
  }

  /** Called after a write this replica committed: the other bodies go, and the latest cycle is
   * reloaded while the one before keeps answering, as only readers that overlap the write can ask
   * meanwhile. Settles once the new cycle answers, or nothing older does (the reload failed). */
  async refreshLatest (): Promise<void> {
    const previous = this.latestCycle
    this.clear()
    const reload = this.loadLatest()
    const generation = this.generation
    // Readers arriving now get the previous answer at once instead of waiting for the reload.
    if (previous !== undefined) this.latestCycle = previous
    try {
      await reload
    } catch {
      // The next reader loads it again; whatever happens, nothing from before the write stays.
      if (this.generation === generation) this.latestCycle = undefined
    }
  }

  get bytes (): number {
    return this.heldBytes
  }

  private async loadLatest (): Promise<LatestCycle> {
    if (this.latestLoading === undefined) {
      const generation = this.generation
      const loading = this.options.loadLatest().then((records) => {
        const cycle = latestCycleOf(records)
        if (this.generation === generation) this.latestCycle = cycle
        return cycle
      }).finally(() => {
        if (this.latestLoading === loading) this.latestLoading = undefined
      })
      this.latestLoading = loading
    }
    return await this.latestLoading
  }

  private store (key: string, body: CachedBody): void {
    const bytes = body.bytes.length + key.length
    if (bytes > this.options.maxBytes) return // larger than the whole budget: served, not kept
    this.entries.delete(key) // so that it is last, whatever was there
    this.entries.set(key, { body, bytes })
    this.lastUsed = key
    this.heldBytes += bytes
    for (const [oldest, entry] of this.entries) {
      if (this.heldBytes <= this.options.maxBytes) break
      this.entries.delete(oldest)
      this.heldBytes -= entry.bytes
    }
  }
}

function townBody (cycle: LatestCycle, town: string): CachedBody {
  const json = cycle.records.get(town)
  if (json === undefined) return EMPTY_LIST
  const body = new CachedBody(`[${json}]`)
  cycle.byTown.set(town, body)
  return body
}

function latestCycleOf (records: LatestRecords): LatestCycle {
  // Keyed by the canonical name, as the route's filter gives it. A town's body (bytes and ETag) is
  // made on first demand: making all of them cost each reload 1–5 ms of the serving thread.
  const byName = new Map(records.map((r) => [normalizeTown(r.town), r.json]))
  const all = new CachedBody(`[${records.map((r) => r.json).join(',')}]`)
  // Compressed now, once per cycle (brotli in the thread pool), so the first clients get the small forms.
  if (all.compressible) {
    all.gzipped()
    all.brotli().catch(() => {}) // a failure leaves gzip answering; the next brotli client tries again
  }
  return { all, records: byName, byTown: new Map() }
}
