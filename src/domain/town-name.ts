import { IngestRejected, echoCell } from './errors.js'
import { normalizeTown } from './town.js'

/**
 * D30: what a town name may be, judged after D4 normalisation (so white space of any kind,
 * tabs and line breaks included, has already become single spaces): 1–64 characters (code
 * points) that start with a letter of any script and continue with letters, combining marks
 * (the accents and vowel signs of decomposed or non-Latin spellings), decimal digits, spaces,
 * hyphens, apostrophes ('), periods and parentheses. That admits every Kenyan town
 * (`Murang'a`, `Moi's Bridge`) and names in any script, and refuses what a town never holds:
 * formula starters (`=`, `+`, `-`, `@`), markup (`<script>`), control characters, zero-width and
 * bidirectional-override characters (which make two different names look alike), and
 * 10,000-character names. The typographic apostrophe (’) is refused too, so that one town cannot
 * be stored under two spellings that look the same.
 */
export const TOWN_NAME_MAX_LENGTH = 64

const TOWN_NAME = new RegExp(`^\\p{L}[\\p{L}\\p{M}\\p{Nd} '.()-]{0,${TOWN_NAME_MAX_LENGTH - 1}}$`, 'u')

const LINE_BREAK = /[\n\r\u2028\u2029]/

/** Is this (already D4-normalised) name an acceptable town name (D30)? */
export function isValidTownName (name: string): boolean {
  return TOWN_NAME.test(name)
}

/**
 * A non-empty town cell of the CSV on `line` → its D4 name, or the D30 400
 * `Invalid town name on line N: <raw cell>` (the cell exactly as in the file).
 */
export function townFromCell (raw: string, line: number): string {
  const town = normalizeTown(raw)
  // D48: a line break inside a quoted cell is a broken row, not white space of a name.
  if (!isValidTownName(town) || LINE_BREAK.test(raw)) throw new IngestRejected(`Invalid town name on line ${line}: ${echoCell(raw)}`)
  return town
}
