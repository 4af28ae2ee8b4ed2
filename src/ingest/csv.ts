import Papa from 'papaparse'
import { isCalendarDate, isCycle, isoDate, type CycleWindow } from '../domain/cycle.js'
import { IngestRejected, echoCell, type RejectionFields } from '../domain/errors.js'
import { CSV_COLUMNS, CSV_HEADER } from '../domain/price-csv.js'
import type { PriceRow } from '../domain/price-rows.js'
import { townFromCell } from '../domain/town-name.js'
import { dateProblem, notUtf8, priceProblem, type DateFormat } from './csv-rejections.js'

/** CSV of a pricing cycle → validated rows (spec 4.5); the whole file is accepted or refused, every refusal an `IngestRejected`. */

type Field = 'validFrom' | 'validTo' | 'town' | 'superPetrol' | 'diesel' | 'kerosene'

type Kind = 'date' | 'town' | 'price'

type ColumnMap = Record<Field, number>

/** A row's six cells as read, one per field, in canonical order. */
type FieldValues = [validFrom: string, validTo: string, town: string, superPetrol: string, diesel: string, kerosene: string]

type ColumnName = (typeof CSV_COLUMNS)[number]

/** The canonical column order, with the names used in messages. */
const FIELDS: ReadonlyArray<{ field: Field, display: ColumnName, kind: Kind }> = ([
  { field: 'validFrom', kind: 'date' },
  { field: 'validTo', kind: 'date' },
  { field: 'town', kind: 'town' },
  { field: 'superPetrol', kind: 'price' },
  { field: 'diesel', kind: 'price' },
  { field: 'kerosene', kind: 'price' }
] as const).map((spec, i) => ({ ...spec, display: CSV_COLUMNS[i] as ColumnName }))

/** Spec 4.5 rule 2: header names after lower-casing and dropping all but letters and digits. */
const HEADER_ALIASES: ReadonlyMap<string, Field> = new Map([
  ['from', 'validFrom'], ['validfrom', 'validFrom'],
  ['to', 'validTo'], ['validto', 'validTo'],
  ['town', 'town'],
  ['superpms', 'superPetrol'], ['super', 'superPetrol'], ['superpetrol', 'superPetrol'],
  ['dieselago', 'diesel'], ['diesel', 'diesel'],
  ['keroseneik', 'kerosene'], ['kerosene', 'kerosene']
])

export const HEADER_MISMATCH = `CSV header must include ${CSV_COLUMNS.join(', ')}`
export const NO_ROWS = 'CSV payload contains no rows.'
const NOT_UTF8 = 'Uploaded file is not valid UTF-8 text.'

const NOT_ALNUM = /[^\p{L}\p{N}]/gu
const DMY = /^(\d{2})-(\d{2})-(\d{4})$/
const YMD = /^(\d{4})-(\d{2})-(\d{2})$/
const PRICE = /^(-?)(\d+)(?:\.(\d{1,2})0*)?$/ // zeros after two decimals lose nothing
const LINE_BREAKS = /\r\n?/g

/** UTF-8 text; other bytes are refused, naming the encoding they seem to be in (D72). */
export function decodeCsv (bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw notUtf8Refusal(bytes)
  }
}

/** The 400 for an upload whose bytes are not UTF-8, with the line or the encoding they seem to be in. */
export function notUtf8Refusal (bytes: Uint8Array): IngestRejected {
  return notUtf8(bytes, NOT_UTF8)
}

/** Spec 4.5 rules 1–3: extra columns are ignored; a field named twice is refused, so no column is silently dropped (D48). */
export function mapHeader (cells: readonly string[]): ColumnMap {
  const found = headerColumns(cells, true)
  if (found.size < FIELDS.length) {
    throw new IngestRejected(HEADER_MISMATCH, undefined, {
      missing_columns: FIELDS.filter(({ field }) => !found.has(field)).map((f) => f.display),
      found_columns: cells.slice(0, MAX_FOUND_COLUMNS).map(echoCell)
    })
  }
  const columns = {} as ColumnMap
  for (const { field } of FIELDS) columns[field] = found.get(field) as number
  return columns
}

/** The header cells' columns by field; `strict`: a field named twice is refused. */
function headerColumns (cells: readonly string[], strict: boolean): Map<Field, number> {
  const found = new Map<Field, number>()
  cells.forEach((cell, index) => {
    const field = HEADER_ALIASES.get(headerKey(cell))
    if (field === undefined) return
    const earlier = found.get(field)
    if (earlier !== undefined && strict) {
      const name = FIELDS.find((f) => f.field === field)?.display ?? field
      throw new IngestRejected(`CSV header names ${name} twice (columns ${earlier + 1} and ${index + 1})`)
    }
    if (earlier === undefined) found.set(field, index)
  })
  return found
}

const headerKey = (cell: string): string => cell.toLowerCase().replace(NOT_ALNUM, '')

/** A refused header lists at most this many of its cells. */
const MAX_FOUND_COLUMNS = 32

/** The format a date cell is written in, judged by its shape; neither shape is an error. */
export function detectDateFormat (raw: string): DateFormat {
  const cell = raw.trim()
  if (DMY.test(cell)) return 'DD-MM-YYYY'
  if (YMD.test(cell)) return 'YYYY-MM-DD'
  throw new IngestRejected(`Invalid date format: ${echoCell(raw)}`, undefined, dateProblem(raw, undefined, false))
}

/** A date cell in the file's format → YYYY-MM-DD; the other format or no such day is refused (D7). */
export function parseDateCell (raw: string, format: DateFormat): string {
  const dayFirst = format === 'DD-MM-YYYY'
  const m = (dayFirst ? DMY : YMD).exec(raw.trim())
  const year = Number(m?.[dayFirst ? 3 : 1])
  const month = Number(m?.[2])
  const day = Number(m?.[dayFirst ? 1 : 3])
  if (m === null || !isCalendarDate(year, month, day)) {
    throw new IngestRejected(`Invalid date format: ${echoCell(raw)}`, undefined, dateProblem(raw, format, m !== null))
  }
  return isoDate(year, month, day)
}

/** Price cells: canonical two decimals by string arithmetic, so nothing is rounded (D5); 0 < p ≤ 9999.99. */
export function parsePriceCell (raw: string): string {
  if (isCanonicalPrice(raw)) return raw // the common cell, already as stored: no regex, no copy
  const m = PRICE.exec(raw.trim())
  if (m === null) throw new IngestRejected(`Invalid price value: ${echoCell(raw)}`, undefined, priceProblem(raw))
  const digits = m[2] as string
  let start = 0
  while (start < digits.length - 1 && digits[start] === '0') start++
  const whole = digits.slice(start)
  const cents = (m[3] ?? '').padEnd(2, '0')
  if (m[1] === '-' || whole.length > 4 || (whole === '0' && cents === '00')) {
    throw new IngestRejected(`Price out of range: ${echoCell(raw)}`)
  }
  return `${whole}.${cents}`
}

/** The canonical price form, already as stored ('180.50'): checked by character code, 3 cells a row. */
function isCanonicalPrice (cell: string): boolean {
  const dot = cell.length - 3
  if (dot < 1 || dot > 4 || cell.charCodeAt(dot) !== 0x2e) return false
  const first = cell.charCodeAt(0)
  if (first < 0x31 || first > 0x39) return false // 1–9: no leading zero, no sign, no space
  for (let i = 1; i < cell.length; i++) {
    if (i === dot) continue
    const c = cell.charCodeAt(i)
    if (c < 0x30 || c > 0x39) return false
  }
  return true
}

/** The first error in file order is the one reported; lines are physical (header = 1, blank lines count). */
export function parseCycleCsv (text: string, window?: CycleWindow): PriceRow[] {
  const batches = [...cycleCsvBatches(text, Infinity, window)]
  return batches.length === 1 ? batches[0] as PriceRow[] : batches.flat()
}

export const BATCH_CHARS = 64 * 1024

/** Papa's options for every file: one kind of line break (normalised first), RFC 4180 quotes. */
export const PAPA_OPTIONS = { header: false, delimiter: ',', newline: '\n', quoteChar: '"', skipEmptyLines: false } as const

/** `parseCycleCsv` batch by batch, so the reader can yield to the event loop between them (D57); an error may follow yielded batches (a caller writing as it reads rolls back). */
export function * cycleCsvBatches (text: string, batchChars = BATCH_CHARS, window?: CycleWindow): Generator<PriceRow[], void, undefined> {
  const input = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).replace(LINE_BREAKS, '\n')
  let rows: PriceRow[] = []
  let total = 0
  let readRow: ((cells: readonly string[], line: number) => PriceRow) | undefined
  let headerFields = 0
  let line = 1
  // Unquoted, every row is one line and the file may be cut at any break; quoted, one piece.
  const quoted = input.includes('"')
  const readLine = (cells: string[], malformed: boolean): void => {
    const rowLine = line
    line += quoted ? physicalLines(cells) : 1
    if (malformed) throw new IngestRejected(`Malformed quoted field on line ${rowLine}`, rowLine)
    if (isBlank(cells)) return // skipped, though its line still counts
    if (readRow === undefined) {
      readRow = rowReader(headerOf(cells, rowLine, input), window)
      headerFields = cells.length
      return
    }
    // A value past the header's columns would shift the prices; empty trailing ones are harmless.
    if (cells.length > headerFields) {
      const fields = filledFields(cells)
      if (fields > headerFields) throw new IngestRejected(`Line ${rowLine} has ${fields} fields; the header has ${headerFields}`, rowLine)
    }
    try {
      rows.push(readRow(cells, rowLine))
    } catch (err) {
      if (err instanceof IngestRejected) err.line ??= rowLine
      throw err
    }
  }
  // A piece's rows at once halve Papa's allocations; a quoted file, one piece, goes row by row (bounded memory).
  const config: Papa.ParseConfig<string[]> = {
    ...PAPA_OPTIONS,
    step: quoted ? ({ data, errors }) => { readLine(data, errors.length > 0) } : undefined
  }
  const size = quoted ? Infinity : batchChars
  for (let start = 0; start < input.length;) {
    // A piece ends before a line break, which is dropped: the next piece starts the next line.
    const cut = input.indexOf('\n', start + size)
    const end = cut === -1 ? input.length : cut
    const parsed = Papa.parse<string[]>(input.slice(start, end), config)
    if (!quoted) {
      const malformed = parsed.errors[0]?.row ?? -1 // Papa's errors come in row order
      for (let i = 0; i < parsed.data.length; i++) readLine(parsed.data[i] as string[], i === malformed)
    }
    start = end + 1
    if (rows.length > 0) {
      total += rows.length
      yield rows
      rows = []
    }
  }

  if (readRow === undefined) {
    throw new IngestRejected(HEADER_MISMATCH, undefined, {
      problem: 'empty_file',
      hint: `The file holds no text: export the cycle again, with the header ${CSV_HEADER} as its first line.`,
      missing_columns: FIELDS.map((f) => f.display),
      found_columns: []
    })
  }
  if (total === 0) throw new IngestRejected(NO_ROWS)
}

/** The file's columns from its header on `line`; refused, with the likely cause read from the first lines of `input`. */
function headerOf (cells: readonly string[], line: number, input: string): ColumnMap {
  try {
    return mapHeader(cells)
  } catch (err) {
    if (!(err instanceof IngestRejected)) throw err
    err.line = line
    if (err.detail === HEADER_MISMATCH) Object.assign(err.fields, headerProblem(cells, line, input))
    throw err
  }
}

/** A delimiter some spreadsheets write instead of a comma, with how to avoid it. */
const OTHER_DELIMITERS = [
  { delimiter: ';', hint: 'The columns are separated by semicolons (;), not commas: save the file as "CSV UTF-8 (Comma delimited)", with a point before the decimals.' },
  { delimiter: '\t', hint: 'The columns are separated by tabs, not commas: save the file as "CSV UTF-8 (Comma delimited)".' }
] as const

/** How far below a refused header line a title row may have pushed the real one. */
const HEADER_SEARCH_LINES = 10

/** Why the header on `line` lacks columns: a `sep=` line, another delimiter, a title row, a misspelt name, or just missing. */
function headerProblem (cells: readonly string[], line: number, input: string): RejectionFields {
  const lines = input.slice(0, 64 * 1024).split('\n')
  const text = lines[line - 1] ?? ''
  const found = headerColumns(cells, false).size
  const sep = /^"?sep=(.?)"?$/i.exec(text.trim())
  if (sep !== null) {
    const other = OTHER_DELIMITERS.find((d) => d.delimiter === sep[1])
    return {
      problem: 'sep_line',
      ...(other === undefined ? {} : { delimiter: other.delimiter }),
      hint: `Line ${line} is "sep=${sep[1] as string}", a line some spreadsheets add to name the separator: delete it, so that the header is the first line${other === undefined ? '' : ', and save the file with commas between the columns'}.`
    }
  }
  for (const { delimiter, hint } of OTHER_DELIMITERS) {
    if (text.includes(delimiter) && headerColumns(splitLine(text, delimiter), false).size > found) return { problem: 'delimiter', delimiter, hint }
  }
  for (let next = line; next < Math.min(lines.length, line + HEADER_SEARCH_LINES); next++) {
    if (headerColumns(splitLine(lines[next] as string, ','), false).size === FIELDS.length) {
      return { problem: 'title_row', hint: `Line ${line} is not the header, line ${next + 1} is: delete the lines above the header, so that it is the first line.` }
    }
  }
  const missing = FIELDS.filter(({ field }) => !headerColumns(cells, false).has(field))
  for (const [index, cell] of cells.slice(0, MAX_FOUND_COLUMNS).entries()) {
    const key = headerKey(cell)
    if (key.length < 3 || key.length > 20 || HEADER_ALIASES.has(key)) continue
    const meant = missing.find(({ field }) => [...HEADER_ALIASES].some(([alias, f]) => f === field && editDistance(key, alias) <= 2))
    if (meant !== undefined) {
      return { problem: 'misspelt_column', hint: `"${echoCell(cell.trim())}" (column ${index + 1}) is not a column name this service knows: did you mean ${meant.display}?` }
    }
  }
  return {
    problem: 'missing_columns',
    hint: `The header on line ${line} has no column for ${missing.map((f) => f.display).join(', ')}. Name the columns ${CSV_COLUMNS.join(', ')}; case, spaces and punctuation do not matter.`
  }
}

function splitLine (text: string, delimiter: string): string[] {
  return Papa.parse<string[]>(text, { ...PAPA_OPTIONS, delimiter }).data[0] ?? []
}

/** Levenshtein distance between two short header keys. */
function editDistance (a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length] as number
}

/** A FIELDS entry placed in one file, as the row reader walks it. */
interface Column {
  field: Field
  display: ColumnName
  kind: Kind
  index: number
  slot: number
  /** A blank cell is a missing value; a blank price is an invalid price instead. */
  blankIsMissing: boolean
  read: (cell: string, line: number) => string
}

/** Rows against one file's header, with the file's date format, the rows seen and cell caches. */
function rowReader (map: ColumnMap, window: CycleWindow | undefined): (cells: readonly string[], line: number) => PriceRow {
  let format: DateFormat | undefined
  // Dense town ids make the duplicate check two array lookups instead of hashing a pair of strings per row.
  const dates = new Map<string, string>() // raw cell → YYYY-MM-DD
  const towns = new Map<string, Town>() // raw cell → normalised name and its id
  const townIds = new Map<string, number>() // normalised name → id (several raw spellings share one)
  const cycles = new Map<string, { validTo: string, lines: number[] }>() // valid_from → its checked valid_to, and the line of each town id
  let townId = 0 // the id of the current row's town

  const readTown = (cell: string, line: number): string => {
    let town = towns.get(cell)
    if (town === undefined) {
      const name = townFromCell(cell, line) // normalised, or refused if not a plausible name
      let id = townIds.get(name)
      if (id === undefined) townIds.set(name, id = townIds.size)
      towns.set(cell, town = { name, id })
    }
    townId = town.id
    return town.name
  }
  // Each date column remembers its last cell too: the rows of a cycle usually follow each other.
  const dateReader = (): Column['read'] => {
    let lastCell = ''
    let lastDate = ''
    return (cell) => {
      if (cell === lastCell) return lastDate
      let date = dates.get(cell)
      if (date === undefined) {
        format ??= detectDateFormat(cell) // the first date cell fixes the format
        dates.set(cell, date = parseDateCell(cell, format))
      }
      lastCell = cell
      return lastDate = date
    }
  }

  const columns: Column[] = FIELDS
    .map(({ field, display, kind }, slot) => ({ field, display, kind, index: map[field], slot, blankIsMissing: kind !== 'price', read: kind === 'date' ? dateReader() : kind === 'town' ? readTown : parsePriceCell }))
    .sort((a, b) => a.index - b.index)
  const values = ['', '', '', '', '', ''] // by slot, in FIELDS order

  return (cells, line) => {
    // Within one row the first error is: (1) the first missing cell in canonical order; (2) a bad
    // cell, left to right in the file's column order; (3) the cycle; (4) the duplicate (D10).
    for (let i = 0; i < 6; i++) {
      const column = columns[i] as Column
      if (isMissing(column, cells)) throw missingValue(columns, cells, line)
    }
    let i = 0
    try {
      for (; i < 6; i++) {
        const column = columns[i] as Column
        values[column.slot] = column.read(cells[column.index] as string, line)
      }
    } catch (err) {
      if (err instanceof IngestRejected) err.fields.column = (columns[i] as Column).display
      throw err
    }
    const [validFrom, validTo, town, superPetrol, diesel, kerosene] = values as FieldValues

    let cycle = cycles.get(validFrom)
    if (cycle?.validTo !== validTo) {
      if (!isCycle(validFrom, validTo)) throw invalidCycle(cells, map, line, '')
      if (window !== undefined && (validFrom < window.earliest || validFrom > window.latest)) {
        throw invalidCycle(cells, map, line, ` (a cycle starts from ${window.earliest} to ${window.latest})`)
      }
      // isCycle derives valid_to from valid_from: a cycle met before had this same valid_to.
      cycles.set(validFrom, cycle = { validTo, lines: [] })
    }

    const earlier = cycle.lines[townId]
    if (earlier !== undefined) {
      throw new IngestRejected(`Duplicate row for ${town} from ${validFrom} on lines ${earlier} and ${line}`)
    }
    cycle.lines[townId] = line
    return { line, town, validFrom, validTo, superPetrol, diesel, kerosene }
  }
}

interface Town { name: string, id: number }

function isMissing (column: Column, cells: readonly string[]): boolean {
  const cell = cells[column.index]
  return cell === undefined || (column.blankIsMissing && isBlankCell(cell))
}

/** A row that is not a real cycle, quoting its dates as written; `why` names the window when that is the reason. */
function invalidCycle (cells: readonly string[], map: ColumnMap, line: number, why: string): IngestRejected {
  return new IngestRejected(`Invalid pricing cycle on line ${line}: From ${cells[map.validFrom] as string} To ${cells[map.validTo] as string}${why}`)
}

/** Of a row's missing cells, the one named first in canonical order. */
function missingValue (columns: readonly Column[], cells: readonly string[], line: number): IngestRejected {
  const first = columns.filter((column) => isMissing(column, cells)).sort((a, b) => a.slot - b.slot)[0] as Column
  return new IngestRejected(`Missing value for ${first.display} on line ${line}`, undefined, { column: first.display })
}

/** `cell.trim() === ''`, without trimming the usual cell, which starts with a visible ASCII character. */
function isBlankCell (cell: string): boolean {
  const first = cell.charCodeAt(0)
  return !(first > 0x20 && first < 0x7f) && cell.trim() === ''
}

/** A row of white space only (`,,,` a spreadsheet leaves) is a blank line. */
function isBlank (cells: readonly string[]): boolean {
  for (const cell of cells) if (!isBlankCell(cell)) return false
  return true
}

function filledFields (cells: readonly string[]): number {
  let n = cells.length
  while (n > 0 && isBlankCell(cells[n - 1] as string)) n--
  return n
}

/** How many physical lines a row spans: its own, plus one per line break inside quoted cells. */
function physicalLines (cells: readonly string[]): number {
  let lines = 1
  for (const cell of cells) {
    for (let i = cell.indexOf('\n'); i !== -1; i = cell.indexOf('\n', i + 1)) lines++
  }
  return lines
}
