import { FUELS, perFuel, type Fuel, type FuelKey } from '../domain/fuels.js'
import type { PriceRow, StoredPrice } from '../domain/price-rows.js'
import { townKey } from '../domain/town.js'
import { percent } from './cycle-warnings.js'
import { Slices } from './slices.js'

/** The dry run's plausibility review (D40): linear in rows and towns, paused between slices (D57). */

/** One town's three prices in whole cents. */
export type FuelCents = Record<FuelKey, number>

export interface PriceWarning {
  /** Line of the file (header = 1). */
  line: number
  town: string
  fuel: FuelKey
  kind: 'moved' | 'outlier'
  detail: string
  /** The file's price, in cents. */
  price: number
  /** The same town's price in the cycle compared with, in cents; null when it has none there. */
  previous: number | null
}

/** A town of the file's cycle that the cycle compared with also has: what the admin page charts. */
export interface PriceChange {
  town: string
  previous: FuelCents
  price: FuelCents
}

export interface CycleReview {
  validFrom: string
  validTo: string
  /** The cycle compared with: the latest one before it, stored or in the file; null if none. */
  previousValidFrom: string | null
  /** The file's rows of this cycle that are not stored yet, and that change a stored record (D15). */
  inserted: number
  updated: number
  newTowns: string[]
  newTownsNotListed: number
  missingTowns: string[]
  missingTownsNotListed: number
  /** Towns of the cycle compared with; 0 when there is none. */
  previousTowns: number
  warnings: PriceWarning[]
  warningsNotListed: number
  changes: PriceChange[]
  changesNotListed: number
}

/** How much one dry run lists, newest cycle first; beyond it, only counts (D48 bounded answers). */
export interface ReviewLimits {
  warnings: number
  newTowns: number
  missingTowns: number
  changes: number
}

export const REVIEW_LIMITS: Readonly<ReviewLimits> = { warnings: 1000, newTowns: 1000, missingTowns: 1000, changes: 5000 }

interface Town {
  town: string
  cents: FuelCents
}

/** '180.50' → 18050: prices compared as whole cents, never as floats. */
const cents = (price: string): number => Math.round(Number(price) * 100)
const centsOf = (r: Pick<StoredPrice, Fuel['field']>): FuelCents => perFuel(({ field }) => cents(r[field]))
const money = (c: number): string => (c / 100).toFixed(2)

/** `stored`: records of the file's cycles and of the cycle before each; `share`: 0.15 = 15 %; `slices`: the upload's. */
export async function reviewCycles (rows: readonly PriceRow[], stored: readonly StoredPrice[], share: number, limits: Readonly<ReviewLimits> = REVIEW_LIMITS, slices = new Slices()): Promise<CycleReview[]> {
  // Each cycle as it will stand after the upload, by D3 town key: stored records, overridden by the file's.
  const cycles = new Map<string, Map<string, Town>>()
  const cycleOf = (validFrom: string): Map<string, Town> => {
    let towns = cycles.get(validFrom)
    if (towns === undefined) cycles.set(validFrom, towns = new Map())
    return towns
  }
  // The stored record a row would meet on the unique key (town, valid_from), compared exactly as it is.
  const storedRecords = new Map<string, StoredPrice>()
  for (const r of stored) {
    cycleOf(r.validFrom).set(townKey(r.town), { town: r.town, cents: centsOf(r) })
    storedRecords.set(r.validFrom + r.town, r) // valid_from has a fixed length: the key is unambiguous
    if (slices.due()) await slices.turn()
  }
  const fileCycles = new Map<string, PriceRow[]>()
  for (const r of rows) {
    cycleOf(r.validFrom).set(townKey(r.town), { town: r.town, cents: centsOf(r) })
    let list = fileCycles.get(r.validFrom)
    if (list === undefined) fileCycles.set(r.validFrom, list = [])
    list.push(r)
    if (slices.due()) await slices.turn()
  }
  const known = [...cycles.keys()].sort()
  const left: ReviewLimits = { ...limits }

  const reviews: CycleReview[] = []
  for (const [validFrom, fileRows] of [...fileCycles].sort(([a], [b]) => (a < b ? 1 : -1))) {
    const previousValidFrom = latestBefore(known, validFrom)
    const previous = previousValidFrom === null ? undefined : cycles.get(previousValidFrom)
    const current = cycles.get(validFrom) as Map<string, Town>
    const ranges = await fuelRanges(current, slices)
    const review: CycleReview = {
      validFrom,
      validTo: fileRows[0]?.validTo as string,
      previousValidFrom,
      inserted: 0,
      updated: 0,
      newTowns: [],
      newTownsNotListed: 0,
      missingTowns: [],
      missingTownsNotListed: 0,
      previousTowns: previous?.size ?? 0,
      warnings: [],
      warningsNotListed: 0,
      changes: [],
      changesNotListed: 0
    }
    // Only a listed warning is worded: a file of warnings costs counts, not strings.
    const warn = (make: () => PriceWarning): void => {
      if (left.warnings > 0) {
        left.warnings--
        review.warnings.push(make())
      } else {
        review.warningsNotListed++
      }
    }
    for (const row of fileRows) {
      const key = townKey(row.town)
      const before = previous?.get(key)
      const price = centsOf(row)
      for (const { key: fuel, label: name } of FUELS) {
        const c = price[fuel]
        const was = before?.cents[fuel]
        if (was !== undefined) {
          const moved = Math.abs(c - was) / was
          if (moved > share) {
            warn(() => ({
              line: row.line, town: row.town, fuel, kind: 'moved', price: c, previous: was,
              detail: `${name} for ${row.town} on line ${row.line} moves ${percent(moved)} from ${money(was)} to ${money(c)} (cycle ${previousValidFrom as string}).`
            }))
          }
        }
        // The cycle's other towns: the lowest and highest of all, or the runners-up when the row holds them.
        const range = ranges[fuel]
        const low = range.lowKey === key ? range.secondLow : range.low
        const high = range.highKey === key ? range.secondHigh : range.high
        if (low !== Infinity && (c > high * (1 + share) || c < low * (1 - share))) {
          warn(() => ({
            line: row.line, town: row.town, fuel, kind: 'outlier', price: c, previous: was ?? null,
            detail: `${name} for ${row.town} on line ${row.line} is ${money(c)}, more than ${percent(share)} outside the cycle's other towns (${money(low)} to ${money(high)}).`
          }))
        }
      }
      if (before !== undefined) {
        if (left.changes > 0) {
          left.changes--
          review.changes.push({ town: row.town, previous: before.cents, price })
        } else {
          review.changesNotListed++
        }
      }
      // Counted as the upsert would find them: numeric(6,2) text and canonical prices compare as strings (D15).
      const record = storedRecords.get(row.validFrom + row.town)
      if (record === undefined) review.inserted++
      else if (record.superPetrol !== row.superPetrol || record.diesel !== row.diesel || record.kerosene !== row.kerosene) review.updated++
      if (slices.due()) await slices.turn()
    }
    if (previous !== undefined) {
      // Nothing is new or missing without a cycle to compare with.
      const added = await townsMissingFrom(current, previous, left.newTowns, slices)
      review.newTowns = added.listed
      review.newTownsNotListed = added.notListed
      left.newTowns -= added.listed.length
      const gone = await townsMissingFrom(previous, current, left.missingTowns, slices)
      review.missingTowns = gone.listed
      review.missingTownsNotListed = gone.notListed
      left.missingTowns -= gone.listed.length
    }
    reviews.push(review)
  }
  return reviews
}

function latestBefore (sorted: readonly string[], date: string): string | null {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((sorted[mid] as string) < date) lo = mid + 1
    else hi = mid
  }
  return lo === 0 ? null : sorted[lo - 1] as string
}

/** A fuel's two lowest and two highest prices of a cycle, and whose the extremes are. */
interface Range {
  low: number
  lowKey: string | undefined
  secondLow: number
  high: number
  highKey: string | undefined
  secondHigh: number
}

/** One pass: excluding one town from a range changes only the extreme that town holds (D57). */
async function fuelRanges (towns: ReadonlyMap<string, Town>, slices: Slices): Promise<Record<FuelKey, Range>> {
  const ranges = perFuel((): Range => ({ low: Infinity, lowKey: undefined, secondLow: Infinity, high: -Infinity, highKey: undefined, secondHigh: -Infinity }))
  for (const [key, { cents: prices }] of towns) {
    for (const { key: fuel } of FUELS) {
      const r = ranges[fuel]
      const c = prices[fuel]
      if (c < r.low) {
        r.secondLow = r.low
        r.low = c
        r.lowKey = key
      } else if (c < r.secondLow) {
        r.secondLow = c
      }
      if (c > r.high) {
        r.secondHigh = r.high
        r.high = c
        r.highKey = key
      } else if (c > r.secondHigh) {
        r.secondHigh = c
      }
    }
    if (slices.due()) await slices.turn()
  }
  return ranges
}

/** Towns of `these` that `those` lacks: the first `limit` in D3 order, and how many more there are. */
async function townsMissingFrom (these: ReadonlyMap<string, Town>, those: ReadonlyMap<string, Town>, limit: number, slices: Slices): Promise<{ listed: string[], notListed: number }> {
  const first = new FirstInOrder(limit)
  let found = 0
  for (const [key, { town }] of these) {
    if (!those.has(key)) {
      found++
      first.add(key, town)
    }
    if (slices.due()) await slices.turn()
  }
  const listed = first.result()
  return { listed, notListed: found - listed.length }
}

/** The first `limit` of a stream of towns by D3 key, without sorting them all: O(n log limit). */
class FirstInOrder {
  private items: Array<[string, string]> = []

  constructor (private readonly limit: number) {}

  add (key: string, town: string): void {
    if (this.limit <= 0) return
    this.items.push([key, town])
    if (this.items.length >= 2 * this.limit + 64) this.trim()
  }

  result (): string[] {
    this.trim()
    return this.items.map(([, town]) => town)
  }

  private trim (): void {
    this.items.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    if (this.items.length > this.limit) this.items.length = this.limit
  }
}
