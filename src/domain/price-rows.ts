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
  return newestFirst(byFrom)
}

function newestFirst (byFrom: ReadonlyMap<string, string>): Cycle[] {
  return [...byFrom].sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0)).map(([validFrom, validTo]) => ({ validFrom, validTo }))
}

/**
 * Validated rows packed for the trip from the parsing worker: their text in PostgreSQL's COPY
 * format, ready to send, and each row's line. Both are bytes off the JavaScript heap: 100,000 rows
 * held as objects made each of the main thread's young-generation collections copy them again.
 */
export interface PackedRows {
  /** One line per row: town, valid_from, valid_to, the three prices, tab-separated, COPY-escaped. */
  text: Uint8Array<ArrayBuffer>
  lines: Int32Array<ArrayBuffer>
  /** The batch's distinct cycles, newest first. */
  cycles: Cycle[]
}

/** A batch as the writer takes it: packed by the parser, or rows from the seed and tests. */
export type RowBatch = PackedRows | readonly PriceRow[]

export function packRows (rows: readonly PriceRow[]): PackedRows {
  const parts = new Array<string>(rows.length * 12)
  const lines = new Int32Array(rows.length)
  let k = 0
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as PriceRow
    lines[i] = r.line
    parts[k++] = copyText(r.town)
    parts[k++] = '\t'
    parts[k++] = r.validFrom
    parts[k++] = '\t'
    parts[k++] = r.validTo
    parts[k++] = '\t'
    parts[k++] = r.superPetrol
    parts[k++] = '\t'
    parts[k++] = r.diesel
    parts[k++] = '\t'
    parts[k++] = r.kerosene
    parts[k++] = '\n'
  }
  // One join of the cells: half the garbage of a string built row by row.
  return { text: new TextEncoder().encode(parts.join('')), lines, cycles: cyclesOf(rows) }
}

export function packed (batch: RowBatch): PackedRows {
  return 'text' in batch ? batch : packRows(batch)
}

export function unpackRows ({ text, lines }: PackedRows): PriceRow[] {
  const rows = new Array<PriceRow>(lines.length)
  const decoded = new TextDecoder().decode(text)
  let at = 0
  for (let i = 0; i < lines.length; i++) {
    const end = decoded.indexOf('\n', at)
    const [town, validFrom, validTo, superPetrol, diesel, kerosene] = decoded.slice(at, end).split('\t') as [string, string, string, string, string, string]
    rows[i] = { line: lines[i] as number, town: fromCopyText(town), validFrom, validTo, superPetrol, diesel, kerosene }
    at = end + 1
  }
  return rows
}

export function rowCount (batches: readonly RowBatch[]): number {
  let count = 0
  for (const batch of batches) count += 'text' in batch ? batch.lines.length : batch.length
  return count
}

/** The distinct cycles of all the batches, newest first. */
export function cyclesOfBatches (batches: readonly RowBatch[]): Cycle[] {
  const byFrom = new Map<string, string>()
  for (const batch of batches) {
    for (const { validFrom, validTo } of 'text' in batch ? batch.cycles : cyclesOf(batch)) byFrom.set(validFrom, validTo)
  }
  return newestFirst(byFrom)
}

/** Rows of a batch, whatever its form. */
export function rowsOfBatch (batch: RowBatch): readonly PriceRow[] {
  return 'text' in batch ? unpackRows(batch) : batch
}

const COPY_SPECIAL = /[\\\t\n\r]/
const COPY_ESCAPED = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' } as const
const COPY_UNESCAPED = { '\\': '\\', t: '\t', n: '\n', r: '\r' } as const

/** A value as COPY's text format reads it: backslash, tab and line breaks escaped. */
function copyText (value: string): string {
  if (!COPY_SPECIAL.test(value)) return value
  return value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPED[c as keyof typeof COPY_ESCAPED])
}

function fromCopyText (value: string): string {
  if (!value.includes('\\')) return value
  return value.replace(/\\([\\tnr])/g, (_, c: string) => COPY_UNESCAPED[c as keyof typeof COPY_UNESCAPED])
}
