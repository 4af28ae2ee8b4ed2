/**
 * D31: CSV injection (OWASP). Spreadsheets run a cell that starts with `=`, `+`, `-` or `@` as a
 * formula (tab and carriage return are on OWASP's list too: some programs skip them and read
 * what follows). Such a cell is exported with a leading apostrophe, which spreadsheets show
 * but never evaluate, and is quoted.
 *
 * No town accepted by the ingest starts like that (D30: a letter first), nor does a date or a
 * price (> 0), so an export of rows the ingest wrote uploads back unchanged. The guard is for
 * rows written any other way (before D30, by hand in SQL): their cells are disarmed, and an
 * upload of such a file is refused by D30 rather than stored.
 */
const FORMULA_START = /^[=+\-@\t\r]/

/** Does a spreadsheet risk reading this cell as a formula? */
export function looksLikeFormula (cell: string): boolean {
  return FORMULA_START.test(cell)
}

/** The cell itself, or `'` + the cell when it looks like a formula. */
export function disarmFormula (cell: string): string {
  return looksLikeFormula(cell) ? `'${cell}` : cell
}
