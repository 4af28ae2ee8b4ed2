import { CSV_HEADER } from '../domain/price-csv.js'
import type { FuelPrice } from '../generated/openapi.js'
import { disarmFormula, looksLikeFormula } from './formula-guard.js'

export { CSV_HEADER }

/**
 * Price records as CSV in the format POST /v1/ingest/csv reads (spec 4.5), so that an export
 * uploads back unchanged: the ingest header, `DD-MM-YYYY` dates (D7), prices with two decimals
 * (D5), RFC 4180 quoting and CRLF line ends.
 */
const CSV_LINE_END = '\r\n'

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8'

/** `2026-10-15` → `15-10-2026` (D7: the first format the ingest accepts). */
export function csvDate (isoDate: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate)
  if (m === null) throw new Error(`not an ISO date: ${isoDate}`)
  return `${m[3]}-${m[2]}-${m[1]}`
}

/**
 * `180.5` → `180.50`. Prices are numeric(6,2) sent as float8; the double nearest a two-decimal
 * value is within 1e-13 of it, so rounding to two places gives that value back exactly.
 */
export function csvPrice (price: number): string {
  if (!Number.isFinite(price)) throw new Error(`not a price: ${price}`)
  return price.toFixed(2)
}

/**
 * RFC 4180: a field containing a comma, a double quote or a line break is quoted, with inner
 * quotes doubled. Leading or trailing white space is quoted too, so no reader trims it away.
 * A field a spreadsheet would run as a formula gets a leading apostrophe, and quotes (D31).
 */
export function csvField (value: string): string {
  if (looksLikeFormula(value)) return `"${disarmFormula(value).replaceAll('"', '""')}"`
  if (!/[",\r\n]|^\s|\s$/.test(value)) return value
  return `"${value.replaceAll('"', '""')}"`
}

/** One record as a CSV line, line end included. */
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

/** The records of one batch as one string, ready to write. */
export function csvLines (rows: readonly FuelPrice[]): string {
  let out = ''
  for (const row of rows) out += csvLine(row)
  return out
}

/** A whole export: the header line, then the batches as CSV lines, pulled as the response drains. */
export async function * csvDocument (
  first: IteratorResult<FuelPrice[], void>,
  rest: AsyncGenerator<FuelPrice[], void, undefined>
): AsyncGenerator<string, void, undefined> {
  yield CSV_HEADER + CSV_LINE_END
  if (first.done === true) return
  yield csvLines(first.value)
  for await (const rows of rest) yield csvLines(rows)
}
