/** A pricing cycle, the 15th to the 14th of the next month (spec 2 rule 3); ISO dates, no time zone. */
export interface Cycle {
  validFrom: string
  validTo: string
}

const pad = (n: number): string => String(n).padStart(2, '0')

export function isoDate (year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${pad(month)}-${pad(day)}`
}

export function isCalendarDate (year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1 || year < 1) return false
  const d = new Date(Date.UTC(year, month - 1, day))
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day
}

/** A date's month counted as year × 12 + (month − 1), the count `cycleStartingIn` takes. */
export function monthIndex (date: string): number {
  const [y, m] = date.split('-').map(Number) as [number, number]
  return y * 12 + (m - 1)
}

export function cycleOf (date: string): Cycle {
  const startsThisMonth = Number(date.split('-')[2]) >= 15
  return cycleStartingIn(monthIndex(date) - (startsThisMonth ? 0 : 1))
}

// en-CA formats a date as YYYY-MM-DD; built once, as a formatter costs far more than a format.
const KENYA_DATE = new Intl.DateTimeFormat('en-CA', { timeZone: 'Africa/Nairobi', year: 'numeric', month: '2-digit', day: '2-digit' })

export function todayInKenya (now: Date = new Date()): string {
  return KENYA_DATE.format(now)
}

export function cycleFrom (validFrom: string): Cycle | null {
  if (Number(validFrom.split('-')[2]) !== 15) return null
  return cycleStartingIn(monthIndex(validFrom))
}

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

/** The first and the last valid_from an upload may hold (inclusive). */
export interface CycleWindow { earliest: string, latest: string }

const EARLIEST_VALID_FROM = '1970-01-15'

const CYCLES_AHEAD = 3

/** The cycles an upload may hold: from 1970 to three cycles after today's in Kenya (D48). */
export function acceptedCycleWindow (now: Date = new Date()): CycleWindow {
  return { earliest: EARLIEST_VALID_FROM, latest: cycleStartingIn(monthIndex(cycleOf(todayInKenya(now)).validFrom) + CYCLES_AHEAD).validFrom }
}
