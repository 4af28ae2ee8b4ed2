import type { Cycle } from './cycle.js'

/** One validated row; prices as canonical decimal strings, bound to numeric(6,2) without a float. */
export interface PriceRow {
  line: number
  town: string
  validFrom: string
  validTo: string
  superPetrol: string
  diesel: string
  kerosene: string
}

/** A stored record, prices as their exact decimal text ('180.50'). */
export type StoredPrice = Omit<PriceRow, 'line' | 'validTo'>

export interface IngestOutcome {
  /** Data rows of the file: inserted + updated + unchanged. */
  recordsProcessed: number
  inserted: number
  /** Rows whose prices changed an existing (town, valid_from); their ids are kept. */
  updated: number
  unchanged: number
  cycles: Cycle[]
}

/** Distinct cycles, newest first (YYYY-MM-DD strings sort as dates). */
export function cyclesOf (rows: readonly PriceRow[]): Cycle[] {
  const byFrom = new Map<string, string>()
  for (const row of rows) byFrom.set(row.validFrom, row.validTo)
  return [...byFrom].sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0)).map(([validFrom, validTo]) => ({ validFrom, validTo }))
}
