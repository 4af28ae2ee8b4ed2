import { FUELS } from '../domain/fuels.js'
import { townKey } from '../domain/town.js'
import type { PriceRow, StoredPrice } from '../domain/price-rows.js'

/** D40 dry-run plausibility review. Pure: the caller reads what is stored. */

export interface PriceWarning {
  /** Line of the file (header = 1). */
  line: number
  town: string
  fuel: 'super_petrol' | 'diesel' | 'kerosene'
  kind: 'moved' | 'outlier'
  detail: string
}

export interface CycleReview {
  validFrom: string
  validTo: string
  /** The cycle compared with: the latest one before it, stored or in the file; null if none. */
  previousValidFrom: string | null
  newTowns: string[]
  missingTowns: string[]
  /** Towns of the cycle compared with; 0 when there is none. */
  previousTowns: number
  warnings: PriceWarning[]
}

type Fuel = PriceWarning['fuel']
type Prices = Record<Fuel, string>

/** '180.50' → 18050: prices compared as whole cents, never as floats. */
const cents = (price: string): number => Math.round(Number(price) * 100)
const money = (c: number): string => (c / 100).toFixed(2)
const percent = (share: number): string => `${(Math.round(share * 1000) / 10).toFixed(1)}%`
const byTownKey = (a: string, b: string): number => (townKey(a) < townKey(b) ? -1 : townKey(a) > townKey(b) ? 1 : 0)

/** `stored`: records of the file's cycles and of the cycle before each; `share`: 0.15 = 15 %. */
export function reviewCycles (rows: readonly PriceRow[], stored: readonly StoredPrice[], share: number): CycleReview[] {
  // Each cycle as it will stand after the upload: stored records, overridden by the file's.
  const cycles = new Map<string, Map<string, { town: string, prices: Prices, line?: number }>>()
  const cycleOf = (validFrom: string): Map<string, { town: string, prices: Prices, line?: number }> => {
    let towns = cycles.get(validFrom)
    if (towns === undefined) cycles.set(validFrom, towns = new Map())
    return towns
  }
  for (const r of stored) {
    cycleOf(r.validFrom).set(townKey(r.town), { town: r.town, prices: { super_petrol: r.superPetrol, diesel: r.diesel, kerosene: r.kerosene } })
  }
  const fileCycles = new Map<string, PriceRow[]>()
  for (const r of rows) {
    cycleOf(r.validFrom).set(townKey(r.town), { town: r.town, line: r.line, prices: { super_petrol: r.superPetrol, diesel: r.diesel, kerosene: r.kerosene } })
    let list = fileCycles.get(r.validFrom)
    if (list === undefined) fileCycles.set(r.validFrom, list = [])
    list.push(r)
  }
  const known = [...cycles.keys()].sort()

  return [...fileCycles].sort(([a], [b]) => (a < b ? 1 : -1)).map(([validFrom, fileRows]) => {
    const previousValidFrom = known.filter((v) => v < validFrom).pop() ?? null
    const previous = previousValidFrom === null ? undefined : cycles.get(previousValidFrom)
    const current = cycles.get(validFrom) as Map<string, { town: string, prices: Prices }>
    const warnings: PriceWarning[] = []
    for (const row of fileRows) {
      const key = townKey(row.town)
      for (const { key: fuel, field, label: name } of FUELS) {
        const price = cents(row[field])
        const before = previous?.get(key)
        if (before !== undefined) {
          const was = cents(before.prices[fuel])
          const moved = Math.abs(price - was) / was
          if (moved > share) {
            warnings.push({
              line: row.line, town: row.town, fuel, kind: 'moved',
              detail: `${name} for ${row.town} on line ${row.line} moves ${percent(moved)} from ${money(was)} to ${money(price)} (cycle ${previousValidFrom as string}).`
            })
          }
        }
        let low = Infinity
        let high = -Infinity
        for (const [otherKey, other] of current) {
          if (otherKey === key) continue
          const c = cents(other.prices[fuel])
          if (c < low) low = c
          if (c > high) high = c
        }
        if (low !== Infinity && (price > high * (1 + share) || price < low * (1 - share))) {
          warnings.push({
            line: row.line, town: row.town, fuel, kind: 'outlier',
            detail: `${name} for ${row.town} on line ${row.line} is ${money(price)}, more than ${percent(share)} outside the cycle's other towns (${money(low)} to ${money(high)}).`
          })
        }
      }
    }
    const currentTowns = [...current.values()].map((t) => t.town)
    const previousTowns = previous === undefined ? [] : [...previous.values()].map((t) => t.town)
    return {
      validFrom,
      validTo: fileRows[0]?.validTo as string,
      previousValidFrom,
      newTowns: previous === undefined ? [] : currentTowns.filter((t) => !previous.has(townKey(t))).sort(byTownKey),
      missingTowns: previousTowns.filter((t) => !current.has(townKey(t))).sort(byTownKey),
      previousTowns: previousTowns.length,
      warnings
    }
  })
}
