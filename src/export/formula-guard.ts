/** CSV exports cannot run as formulas (OWASP): such a cell gets a leading apostrophe. */
const FORMULA_START = /^[=+\-@\t\r]/

export function looksLikeFormula (cell: string): boolean {
  return FORMULA_START.test(cell)
}

export function disarmFormula (cell: string): string {
  return looksLikeFormula(cell) ? `'${cell}` : cell
}
