/**
 * D4: town names. Trim, collapse inner runs of white space to one space, and title-case word by
 * word, words being split on spaces and hyphens only, so `MURANG'A` becomes `Murang'a` (a naive
 * title-case gives `Murang'A`), `moi's bridge` becomes `Moi's Bridge` and `kapsabet-nandi`
 * becomes `Kapsabet-Nandi`.
 */
export function normalizeTown (raw: string): string {
  return collapseWhitespace(raw)
    .split(/([ -])/)
    .map((part) => part === ' ' || part === '-' ? part : titleWord(part))
    .join('')
}

function collapseWhitespace (raw: string): string {
  return raw.trim().replace(/\s+/g, ' ')
}

function titleWord (word: string): string {
  if (word.length === 0) return word
  const lower = word.toLowerCase()
  // Upper-case the first code point only (handles names that start with a non-BMP character).
  const first = String.fromCodePoint(lower.codePointAt(0) as number)
  return first.toUpperCase() + lower.slice(first.length)
}

/** D4 + D21: a `town` query value as a filter: trimmed and collapsed; empty means absent. */
export function townFilter (raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  const collapsed = collapseWhitespace(raw)
  return collapsed === '' ? undefined : collapsed
}

/**
 * D3/D4: the key towns are compared and ordered by: the name lower-cased. The database states
 * the same key as `lower(town) COLLATE "C"` (db/prices.ts), compared byte-wise.
 */
export function townKey (town: string): string {
  return town.toLowerCase()
}
