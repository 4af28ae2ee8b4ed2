/**
 * The pricing cycle rule (spec 2, rule 3): a cycle runs from the 15th of one month to the 14th of
 * the next. Dates are plain calendar dates in ISO form (YYYY-MM-DD); no time zone is involved.
 */
export interface Cycle {
  validFrom: string
  validTo: string
}

const pad = (n: number): string => String(n).padStart(2, '0')

export function isoDate (year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${pad(month)}-${pad(day)}`
}

/** True when year/month/day name a real calendar date (31-02-2026 does not). */
export function isCalendarDate (year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1 || year < 1) return false
  const d = new Date(Date.UTC(year, month - 1, day))
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day
}

/** The cycle that is active on a calendar date given as YYYY-MM-DD. */
export function cycleOf (date: string): Cycle {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number]
  // day >= 15: this month's 15th to next month's 14th; else previous month's 15th to this 14th.
  const startMonthIndex = d >= 15 ? y * 12 + (m - 1) : y * 12 + (m - 1) - 1
  return cycleStartingIn(startMonthIndex)
}

/** Today's date (YYYY-MM-DD) in Kenya's time zone, where cycles change at local midnight. */
export function todayInKenya (now: Date = new Date()): string {
  // en-CA formats a date as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Africa/Nairobi', year: 'numeric', month: '2-digit', day: '2-digit' }).format(now)
}

/** The cycle whose valid_from is the given date, or null when that date does not start a cycle. */
export function cycleFrom (validFrom: string): Cycle | null {
  const [y, m, d] = validFrom.split('-').map(Number) as [number, number, number]
  if (d !== 15) return null
  return cycleStartingIn(y * 12 + (m - 1))
}

/** D8: valid_from must be the 15th of a month and valid_to the 14th of the following month. */
export function isCycle (validFrom: string, validTo: string): boolean {
  return cycleFrom(validFrom)?.validTo === validTo
}

/** The cycle starting on the 15th of a month counted as year × 12 + (month − 1). */
export function cycleStartingIn (monthIndex: number): Cycle {
  const y = Math.floor(monthIndex / 12)
  const m = (monthIndex % 12) + 1
  const next = monthIndex + 1
  return {
    validFrom: isoDate(y, m, 15),
    validTo: isoDate(Math.floor(next / 12), (next % 12) + 1, 14)
  }
}

/** D48: the first day of the earliest cycle an upload may hold (history back to 1970). */
export const EARLIEST_VALID_FROM = '1970-01-15'

/** D48: how many cycles after today's an upload may announce. */
export const CYCLES_AHEAD = 3

/** The valid_from values an upload may hold on `now`: a cycle of 9999 or 1800 is a typo. */
export interface CycleWindow { earliest: string, latest: string }

export function plausibleCycles (now: Date = new Date()): CycleWindow {
  const [y, m] = cycleOf(todayInKenya(now)).validFrom.split('-').map(Number) as [number, number]
  return { earliest: EARLIEST_VALID_FROM, latest: cycleStartingIn(y * 12 + (m - 1) + CYCLES_AHEAD).validFrom }
}
