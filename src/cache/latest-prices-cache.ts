import type { FuelPrice } from '../generated/openapi.js'
import { readyBody, type ReadyBody } from '../http/body.js'

export interface LatestSnapshot {
  /** The whole latest cycle, in D3 order. */
  readonly all: ReadyBody
  /** One body per town, keyed by the lower-cased canonical name. */
  readonly byTown: ReadonlyMap<string, ReadyBody>
  /** `[]`, for an unknown town (spec 4.2 rule 4). */
  readonly none: ReadyBody
  readonly validFrom: string | undefined
}

const NONE = readyBody('[]')

/**
 * Spec 4.2 rule 6: the latest cycle is read once after a start or an ingest and then served from
 * memory as ready bytes (no query, no serialisation, no compression per request).
 *
 * Concurrent misses share one load. `clear()` bumps a generation, so a load that began before an
 * ingest committed can never install its (stale) result afterwards.
 */
export class LatestPricesCache {
  private snapshot: LatestSnapshot | undefined
  private pending: Promise<LatestSnapshot> | undefined
  private generation = 0
  hits = 0
  misses = 0

  constructor (private readonly load: () => Promise<FuelPrice[]>) {}

  async get (): Promise<LatestSnapshot> {
    if (this.snapshot !== undefined) {
      this.hits++
      return this.snapshot
    }
    this.misses++
    if (this.pending === undefined) {
      const generation = this.generation
      const pending = this.load().then((rows) => {
        const snapshot = buildSnapshot(rows)
        if (this.generation === generation) this.snapshot = snapshot
        return snapshot
      }).finally(() => {
        if (this.pending === pending) this.pending = undefined
      })
      this.pending = pending
    }
    return await this.pending
  }

  /** Spec 4.2 rule 6 / D26: called after every committed ingest. */
  clear (): void {
    this.generation++
    this.snapshot = undefined
    this.pending = undefined
  }

  get filled (): boolean {
    return this.snapshot !== undefined
  }
}

export function buildSnapshot (rows: FuelPrice[]): LatestSnapshot {
  const byTown = new Map<string, ReadyBody>()
  for (const row of rows) byTown.set(row.town.toLowerCase(), readyBody(serializePrices([row])))
  return { all: readyBody(serializePrices(rows)), byTown, none: NONE, validFrom: rows[0]?.valid_from }
}

/** FuelPrice JSON with the fields in contract order. */
export function serializePrices (rows: FuelPrice[]): string {
  let out = '['
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as FuelPrice
    if (i > 0) out += ','
    out += `{"id":${r.id},"town":${JSON.stringify(r.town)},"super_petrol":${r.super_petrol},"diesel":${r.diesel},"kerosene":${r.kerosene},"valid_from":"${r.valid_from}","valid_to":"${r.valid_to}"}`
  }
  return out + ']'
}
