import { CSV_HEADER } from '../domain/price-csv.js'
import type { FuelPrice } from '../generated/openapi.js'
import { disarmFormula, looksLikeFormula } from './formula-guard.js'

export { CSV_HEADER }

// An export uploads back unchanged (spec 4.5): dates and prices as the ingest reads them, RFC 4180 quoting, CRLF.
const CSV_LINE_END = '\r\n'

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8'

/** `2026-10-15` → `15-10-2026` (the first format the ingest accepts). */
export function csvDate (isoDate: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate)
  if (m === null) throw new Error(`not an ISO date: ${isoDate}`)
  return `${m[3]}-${m[2]}-${m[1]}`
}

/** Two decimals: the double nearest a numeric(6,2) value rounds back to it exactly. */
export function csvPrice (price: number): string {
  if (!Number.isFinite(price)) throw new Error(`not a price: ${price}`)
  return price.toFixed(2)
}

/** RFC 4180 quoting (edge white space too) and the formula guard. */
export function csvField (value: string): string {
  if (looksLikeFormula(value)) return `"${disarmFormula(value).replaceAll('"', '""')}"`
  if (!/[",\r\n]|^\s|\s$/.test(value)) return value
  return `"${value.replaceAll('"', '""')}"`
}

export function csvLine (row: FuelPrice): string {
  return [
    csvDate(row.valid_from),
    csvDate(row.valid_to),
    csvField(row.town),
    // Through csvField too: a negative price written outside the ingest would start with '-' (D31).
    csvField(csvPrice(row.super_petrol)),
    csvField(csvPrice(row.diesel)),
    csvField(csvPrice(row.kerosene))
  ].join(',') + CSV_LINE_END
}

export function csvLines (rows: readonly FuelPrice[]): string {
  let out = ''
  for (const row of rows) out += csvLine(row)
  return out
}

export async function * csvDocument (
  first: IteratorResult<FuelPrice[], void>,
  rest: AsyncGenerator<FuelPrice[], void, undefined>
): AsyncGenerator<string, void, undefined> {
  yield CSV_HEADER + CSV_LINE_END
  if (first.done === true) return
  yield csvLines(first.value)
  for await (const rows of rest) yield csvLines(rows)
}
