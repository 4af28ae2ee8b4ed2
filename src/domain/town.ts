/** Apostrophes autocorrect and other keyboards type for `'`, so `Murang’a` is `Murang'a`. */
const TYPOGRAPHIC_APOSTROPHES = /[\u2019\u2018\u201b\u02bc\u2032\uff07]/g

/** Town normalisation: one canonical form per town, so one town is one town (D4; NFC, idempotent). */
export function normalizeTown (raw: string): string {
  return collapseWhitespace(raw.normalize('NFC').replace(TYPOGRAPHIC_APOSTROPHES, "'"))
    .split(/([ -])/)
    .map((part) => part === ' ' || part === '-' ? part : titleWord(part))
    .join('')
    .normalize('NFC')
}

function collapseWhitespace (raw: string): string {
  return raw.trim().replace(/\s+/g, ' ')
}

const LETTER = /\p{L}/u

/** Lower-cased with its first letter upper-cased, unless that becomes several letters (`ß`, `ﬁ`). */
function titleWord (word: string): string {
  const lower = word.toLowerCase()
  const at = lower.search(LETTER)
  if (at === -1) return lower
  const first = String.fromCodePoint(lower.codePointAt(at) as number)
  const upper = first.toUpperCase()
  return upper.length === first.length ? lower.slice(0, at) + upper + lower.slice(at + first.length) : lower
}

/** Empty means absent; otherwise the canonical form, which is also the read-cache key. */
export function townFilter (raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  return collapseWhitespace(raw) === '' ? undefined : normalizeTown(raw)
}

/** Town order in JavaScript: the key src/db/schema.ts's `townOrder` gives the database, `lower(town) COLLATE "C"`. */
export function townKey (town: string): string {
  return town.toLowerCase()
}
