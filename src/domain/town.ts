/**
 * D4: town names. Trim, collapse inner runs of white space to one space, and title-case word by
 * word, words being split on spaces and hyphens only, so `MURANG'A` becomes `Murang'a` (a naive
 * title-case gives `Murang'A`), `moi's bridge` becomes `Moi's Bridge` and `kapsabet-nandi`
 * becomes `Kapsabet-Nandi`. D48: the result is the one canonical form of a name: Unicode NFC (a
 * precomposed `é` and `e` + combining accent are one town), and idempotent (the canonical form of
 * a canonical name is itself), so an export uploads back unchanged.
 */
export function normalizeTown (raw: string): string {
  return collapseWhitespace(raw.normalize('NFC'))
    .split(/([ -])/)
    .map((part) => part === ' ' || part === '-' ? part : titleWord(part))
    .join('')
    .normalize('NFC')
}

function collapseWhitespace (raw: string): string {
  return raw.trim().replace(/\s+/g, ' ')
}

const LETTER = /\p{L}/u

/**
 * The word lower-cased with its first letter upper-cased (`(central)` → `(Central)`). A letter
 * whose upper case is not one character (`ß` → `SS`, `ﬁ` → `FI`) stays as it is, so the result
 * never spells another name (`ﬁnlay` is not `FInlay` beside `Finlay`).
 */
function titleWord (word: string): string {
  const lower = word.toLowerCase()
  const at = lower.search(LETTER)
  if (at === -1) return lower
  const first = String.fromCodePoint(lower.codePointAt(at) as number)
  const upper = first.toUpperCase()
  return upper.length === first.length ? lower.slice(0, at) + upper + lower.slice(at + first.length) : lower
}

/**
 * D4 + D21: a `town` query value as a filter, in the canonical form of D4 (so a filter and a stored
 * name compare alike whatever their case or Unicode form); empty means absent. D48: the read
 * cache is keyed by this same form, which is what the database is given to compare.
 */
export function townFilter (raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  return collapseWhitespace(raw) === '' ? undefined : normalizeTown(raw)
}

/**
 * D3/D4: the key towns are compared and ordered by: the name lower-cased. The database states
 * the same key as `lower(town) COLLATE "C"` (db/prices.ts), compared byte-wise.
 */
export function townKey (town: string): string {
  return town.toLowerCase()
}
