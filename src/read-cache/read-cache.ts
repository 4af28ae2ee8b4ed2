import { normalizeTown } from '../domain/town.js'
import type { FuelPrice } from '../generated/openapi.js'
import { readyBody, type ReadyBody } from '../http-caching/ready-body.js'

/** The latest cycle as ready bodies: all towns, or one town's record. */
export interface LatestSnapshot {
  /** The whole latest cycle, in D3 order. */
  readonly all: ReadyBody
  /** One town's record, or `[]` for an unknown town (spec 4.2 rule 4); `town` as D4 filters it. */
  forTown: (town: string) => ReadyBody
}

interface ReadCacheOptions {
  /** Loads the latest cycle's rows, in D3 order. */
  loadLatest: () => Promise<FuelPrice[]>
  /** Bound on the bytes of the other bodies held (the latest cycle is always kept). */
  maxBytes: number
}

interface Entry { body: ReadyBody, bytes: number }

const NONE = readyBody('[]')

/**
 * D44: every read answered from memory between ingests (spec 4.2 rule 6, widened): prices change only
 * on ingest, so the latest cycle and any other answer (a /v1/prices page, /v1/towns) is read once
 * and then served as ready bytes: no query, no serialisation, compression once per encoding.
 *
 * One version for all of it: `clear()` (after an ingest here, or its NOTIFY from another replica,
 * D26) drops everything at once and bumps a generation, so a load that began before the ingest
 * committed can never install its stale result afterwards. Concurrent misses of one key share
 * one load. The latest cycle is pinned; other bodies are kept least-recently-used first within
 * `maxBytes`, keyed by the normalised query.
 */
export class ReadCache {
  private latestSnapshot: LatestSnapshot | undefined
  private latestPending: Promise<LatestSnapshot> | undefined
  private readonly entries = new Map<string, Entry>()
  private readonly pending = new Map<string, Promise<ReadyBody>>()
  private generation = 0
  /** The key of the entry last in `entries` (the most recently used). */
  private lastUsed: string | undefined
  private heldBytes = 0
  /** Latest-cycle reads served from memory, and those that read the database. */
  hits = 0
  misses = 0
  /** The same for every other body. */
  bodyHits = 0
  bodyMisses = 0

  constructor (private readonly options: ReadCacheOptions) {}

  /**
   * The latest cycle when it is held (a hit, counted), else undefined: the caller then awaits
   * `latest()`. Lets a route answer a hit without a promise (issue 12).
   */
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
    // Most recently used last: a Map keeps insertion order, so re-inserting moves it (unless it
    // is already last: a page asked for again and again costs no map writes).
    if (this.lastUsed !== key) {
      this.entries.delete(key)
      this.entries.set(key, entry)
      this.lastUsed = key
    }
    return entry.body
  }

  /** The body stored under `key`, or the JSON text `load` gives, made ready and stored. */
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

  /** Spec 4.2 rule 6 / D26: called after every committed ingest. */
  clear (): void {
    this.generation++
    this.latestSnapshot = undefined
    this.latestPending = undefined
    this.entries.clear()
    this.lastUsed = undefined
    this.pending.clear()
    this.heldBytes = 0
  }

  /** Whether the latest cycle is held. */
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
