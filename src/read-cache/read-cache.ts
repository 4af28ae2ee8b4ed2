import { normalizeTown } from '../domain/town.js'
import type { FuelPrice } from '../generated/openapi.js'
import { readyBody, type ReadyBody } from '../http-caching/ready-body.js'

export interface LatestSnapshot {
  readonly all: ReadyBody
  /** One town's record, or `[]` for an unknown town (spec 4.2 rule 4); `town` as D4 filters it. */
  forTown: (town: string) => ReadyBody
}

interface ReadCacheOptions {
  loadLatest: () => Promise<FuelPrice[]>
  /** Bound on the bytes of the other bodies held (the latest cycle is always kept). */
  maxBytes: number
}

interface Entry { body: ReadyBody, bytes: number }

const NONE = readyBody('[]')

/** D44 every read served from memory; `clear()` bumps a generation so a stale load never installs. */
export class ReadCache {
  private latestSnapshot: LatestSnapshot | undefined
  private latestPending: Promise<LatestSnapshot> | undefined
  private readonly entries = new Map<string, Entry>()
  private readonly pending = new Map<string, Promise<ReadyBody>>()
  private generation = 0
  private lastUsed: string | undefined
  private heldBytes = 0
  /** Latest-cycle reads served from memory, and those that read the database. */
  hits = 0
  misses = 0
  bodyHits = 0
  bodyMisses = 0

  constructor (private readonly options: ReadCacheOptions) {}

  /** The latest cycle when held (a counted hit), so a route can answer without a promise. */
  heldLatest (): LatestSnapshot | undefined {
    const snapshot = this.latestSnapshot
    if (snapshot !== undefined) this.hits++
    return snapshot
  }

  async latest (): Promise<LatestSnapshot> {
    const held = this.heldLatest()
    if (held !== undefined) return held
    this.misses++
    if (this.latestPending === undefined) {
      const generation = this.generation
      const pending = this.options.loadLatest().then((rows) => {
        const snapshot = buildSnapshot(rows)
        if (this.generation === generation) this.latestSnapshot = snapshot
        return snapshot
      }).finally(() => {
        if (this.latestPending === pending) this.latestPending = undefined
      })
      this.latestPending = pending
    }
    return await this.latestPending
  }

  /** The body stored under `key` (a hit, counted), else undefined: the caller then awaits `body()`. */
  heldBody (key: string): ReadyBody | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    this.bodyHits++
    // Re-inserting moves it last in the Map's order; a key already last costs no writes.
    if (this.lastUsed !== key) {
      this.entries.delete(key)
      this.entries.set(key, entry)
      this.lastUsed = key
    }
    return entry.body
  }

  async body (key: string, load: () => Promise<string>): Promise<ReadyBody> {
    const held = this.heldBody(key)
    if (held !== undefined) return held
    this.bodyMisses++
    let pending = this.pending.get(key)
    if (pending === undefined) {
      const generation = this.generation
      const loading: Promise<ReadyBody> = load().then((json) => {
        const body = readyBody(json)
        if (this.generation === generation) this.store(key, body)
        return body
      }).finally(() => {
        if (this.pending.get(key) === loading) this.pending.delete(key)
      })
      this.pending.set(key, loading)
      pending = loading
    }
    return await pending
  }

  /** D26: called after every committed ingest, here or on another replica. */
  clear (): void {
    this.generation++
    this.latestSnapshot = undefined
    this.latestPending = undefined
    this.entries.clear()
    this.lastUsed = undefined
    this.pending.clear()
    this.heldBytes = 0
  }

  get filled (): boolean {
    return this.latestSnapshot !== undefined
  }

  /** Bytes of the bodies held besides the latest cycle (their uncompressed JSON and keys). */
  get bytes (): number {
    return this.heldBytes
  }

  private store (key: string, body: ReadyBody): void {
    const bytes = body.json.length + key.length
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

function buildSnapshot (rows: FuelPrice[]): LatestSnapshot {
  const byTown = new Map<string, ReadyBody>()
  // D48: keyed by the canonical name, as the route's filter is (townFilter).
  for (const row of rows) byTown.set(normalizeTown(row.town), readyBody(serializePrices([row])))
  const all = readyBody(serializePrices(rows))
  // Compressed now, once per cycle: the first client of each encoding should not wait for it.
  void all.gzip
  void all.br
  return { all, forTown: (town) => byTown.get(town) ?? NONE }
}

/** FuelPrice JSON with the fields in contract order. */
function serializePrices (rows: FuelPrice[]): string {
  let out = '['
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as FuelPrice
    if (i > 0) out += ','
    out += `{"id":${r.id},"town":${JSON.stringify(r.town)},"super_petrol":${r.super_petrol},"diesel":${r.diesel},"kerosene":${r.kerosene},"valid_from":"${r.valid_from}","valid_to":"${r.valid_to}"}`
  }
  return out + ']'
}
