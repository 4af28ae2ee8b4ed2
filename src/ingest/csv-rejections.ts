import { IngestRejected, type RejectionFields } from '../domain/errors.js'

/** Beside a refusal's `detail`, its common cause and how to fix it; run only once a file is refused (D72). */

export type DateFormat = 'DD-MM-YYYY' | 'YYYY-MM-DD'

type PriceProblem = 'empty_price' | 'exponent' | 'too_many_decimals' | 'comma_decimal' | 'thousands_separator' | 'currency_or_unit' | 'not_a_number'

const SAVE_AS_UTF8 = 'save the file as "CSV UTF-8 (Comma delimited) (*.csv)"'

/** The refusal of bytes that are not UTF-8, naming the encoding they seem to be in, or where they stop being UTF-8. */
export function notUtf8 (bytes: Uint8Array, detail: string): IngestRejected {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    return new IngestRejected(detail, undefined, { problem: 'encoding', encoding: 'UTF-16LE', hint: `The file is UTF-16 text (little-endian; Excel calls it "Unicode Text"): ${SAVE_AS_UTF8} instead.` })
  }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    return new IngestRejected(detail, undefined, { problem: 'encoding', encoding: 'UTF-16BE', hint: `The file is UTF-16 text (big-endian): ${SAVE_AS_UTF8} instead.` })
  }
  const { invalidAt, multiByte } = scanUtf8(bytes)
  const at = Math.max(invalidAt, 0)
  const line = lineAt(bytes, at)
  const byte = `0x${(bytes[at] ?? 0).toString(16).toUpperCase().padStart(2, '0')}`
  // Windows-1252 text has accented letters as single bytes and no UTF-8 sequence anywhere.
  if (multiByte === 0 && isWindows1252(bytes)) {
    const letter = new TextDecoder('windows-1252').decode(bytes.subarray(at, at + 1))
    return new IngestRejected(detail, line, {
      problem: 'encoding',
      encoding: 'Windows-1252',
      hint: `Line ${line} has the byte ${byte}, "${letter}" in Windows-1252 ("ANSI"), the encoding the file seems to be saved in: ${SAVE_AS_UTF8} instead.`
    })
  }
  return new IngestRejected(detail, line, { problem: 'invalid_utf8', hint: `The text stops being UTF-8 on line ${line}, at the byte ${byte}: ${SAVE_AS_UTF8}, or retype that character.` })
}

/** The first byte that does not start a valid UTF-8 sequence (-1: none), and how many valid multi-byte sequences there are. */
function scanUtf8 (bytes: Uint8Array): { invalidAt: number, multiByte: number } {
  let invalidAt = -1
  let multiByte = 0
  for (let i = 0; i < bytes.length;) {
    if ((bytes[i] as number) < 0x80) {
      i++
      continue
    }
    const n = sequenceLength(bytes, i)
    if (n === 0) {
      if (invalidAt === -1) invalidAt = i
      if (multiByte > 0) break // neither count can change the answer any more
      i++
    } else {
      multiByte++
      if (invalidAt !== -1) break
      i += n
    }
  }
  return { invalidAt, multiByte }
}

/** RFC 3629: the length of the well-formed sequence starting at `i`, or 0 (overlong, surrogate, beyond U+10FFFF, cut short). */
function sequenceLength (bytes: Uint8Array, i: number): number {
  const lead = bytes[i] as number
  const n = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0
  if (n === 0 || i + n > bytes.length) return 0
  for (let k = 1; k < n; k++) if (((bytes[i + k] as number) & 0xc0) !== 0x80) return 0
  const second = bytes[i + 1] as number
  if ((lead === 0xe0 && second < 0xa0) || (lead === 0xed && second > 0x9f) || (lead === 0xf0 && second < 0x90) || (lead === 0xf4 && second > 0x8f)) return 0
  return n
}

/** Bytes Windows-1252 leaves undefined, and NUL, which no text file of prices holds. */
const NOT_WINDOWS_1252 = new Uint8Array(256)
for (const b of [0x00, 0x81, 0x8d, 0x8f, 0x90, 0x9d]) NOT_WINDOWS_1252[b] = 1

function isWindows1252 (bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (NOT_WINDOWS_1252[bytes[i] as number] === 1) return false
  return true
}

/** The physical line (from 1) holding byte `offset`: CRLF, CR and LF each end a line. */
function lineAt (bytes: Uint8Array, offset: number): number {
  let line = 1
  for (let i = 0; i < offset; i++) {
    if (bytes[i] === 0x0a || (bytes[i] === 0x0d && bytes[i + 1] !== 0x0a)) line++
  }
  return line
}

const EXAMPLE: Record<DateFormat, string> = { 'DD-MM-YYYY': '15-01-2026', 'YYYY-MM-DD': '2026-01-15' }

/** `format` undefined: the first date cell, which fixes it; `inFormat`: the right shape but no real day. */
export function dateProblem (raw: string, format: DateFormat | undefined, inFormat: boolean): RejectionFields {
  if (format !== undefined && inFormat) {
    return { problem: 'no_such_date', date_format: format, hint: `The cell is written ${format}, the format of this file's dates, but no such day exists.` }
  }
  const seen = dateShape(raw.trim())
  if (format === undefined) {
    return { problem: 'date_format', hint: `Write dates as DD-MM-YYYY (15-01-2026) or YYYY-MM-DD (2026-01-15), one format for the whole file; this cell is ${seen}.` }
  }
  return { problem: 'date_format', date_format: format, hint: `This file's dates are ${format} (like ${EXAMPLE[format]}), the format of its first date cell; this cell is ${seen}.` }
}

/** How a refused date cell is written, in words. */
function dateShape (cell: string): string {
  if (/^\d{2}-\d{2}-\d{4}$/.test(cell)) return 'written DD-MM-YYYY'
  if (/^\d{4}-\d{2}-\d{2}$/.test(cell)) return 'written YYYY-MM-DD'
  const separator = /^\d{1,4}([/.])\d{1,2}\1\d{1,4}$/.exec(cell)?.[1]
  if (separator !== undefined) return `written with "${separator}" instead of "-"`
  if (/^(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}-\d{1,2}-\d{4})[ T]\d/.test(cell)) return 'written with a time after the date'
  if (/^\d{1,2}-\d{1,2}-\d{2}$/.test(cell)) return 'written with a two-digit year'
  if (/^(?:\d{1,2}-\d{1,2}-\d{4}|\d{4}-\d{1,2}-\d{1,2})$/.test(cell)) return 'written without a leading zero (05, not 5)'
  return 'not a date in either format'
}

/** Why a price cell is not a plain decimal, in the order the rules are most often broken. */
export function priceProblem (raw: string): RejectionFields {
  const cell = raw.trim()
  const problem = priceRule(cell)
  return { problem, hint: PRICE_HINTS[problem] }
}

function priceRule (cell: string): PriceProblem {
  if (cell === '') return 'empty_price'
  if (/^[+-]?(?:\d+\.?\d*|\.\d+)[eE][+-]?\d+$/.test(cell)) return 'exponent'
  if (/^-?\d+\.\d{3,}$/.test(cell)) return 'too_many_decimals'
  if (/^-?\d+,\d{1,2}$/.test(cell) || /^-?\d{1,3}(?:[. \u00a0\u202f]\d{3})+,\d{1,2}$/.test(cell)) return 'comma_decimal'
  if (/^-?\d{1,3}(?:[, \u00a0\u202f']\d{3})+(?:\.\d+)?$/.test(cell)) return 'thousands_separator'
  // A number with words or symbols before or after it only, never between its digits (`1O0`).
  if (/^(?:[^\d\s]+\s*)?-?\d+(?:[.,]\d+)?(?:\s*[^\d\s]+)?$/u.test(cell) && /[\p{L}\p{Sc}/=]/u.test(cell)) return 'currency_or_unit'
  return 'not_a_number'
}

const PRICE_HINTS: Record<PriceProblem, string> = {
  empty_price: 'The cell is empty: every row needs all three prices.',
  exponent: 'Write the price in full, not in exponent notation: 178.90, not 1.789E+02 (format the column as a number with two decimals).',
  too_many_decimals: 'A price has at most two decimals, with zeros after them allowed: 178.90 or 178.900, not 178.905.',
  comma_decimal: 'Write a point before the decimals, not a comma: 178.90, not 178,90.',
  thousands_separator: 'Write the price without a thousands separator: 1234.50, not 1,234.50.',
  currency_or_unit: 'Write the number alone, without a currency or unit: 178.90, not KSh 178.90.',
  not_a_number: 'A price is a plain decimal number with a point, such as 178.90.'
}
