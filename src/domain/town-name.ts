import { IngestRejected, echoCell } from './errors.js'
import { normalizeTown } from './town.js'

/** What a town name may be, judged after normalisation: 1–64 code points, a letter first (D30). */
const TOWN_NAME_MAX_LENGTH = 64

const TOWN_NAME = new RegExp(`^\\p{L}[\\p{L}\\p{M}\\p{Nd} '.()-]{0,${TOWN_NAME_MAX_LENGTH - 1}}$`, 'u')

const LINE_BREAK = /[\n\r\u2028\u2029]/

export function isValidTownName (name: string): boolean {
  return TOWN_NAME.test(name)
}

export function townFromCell (raw: string, line: number): string {
  const town = normalizeTown(raw)
  // A line break inside a quoted cell is a broken row, not white space of a name.
  if (!isValidTownName(town) || LINE_BREAK.test(raw)) throw new IngestRejected(`Invalid town name on line ${line}: ${echoCell(raw)}`)
  return town
}
