import { cycleOf, monthIndex } from '../domain/cycle.js'
import type { CycleWarning } from '../generated/openapi.js'
import type { CycleReview } from './plausibility.js'

/** A dry run's warnings on a whole cycle (many towns missing, starts far ahead); never a reason to refuse (D73). */
export type ReviewedCycle = Pick<CycleReview, 'validFrom' | 'previousValidFrom' | 'missingTowns' | 'missingTownsNotListed' | 'previousTowns'>

export interface CycleWarningOptions {
  /** Today in Kenya, YYYY-MM-DD. */
  today: string
  /** Share of the previous cycle's towns (0.1 = 10 %). */
  missingTownsShare: number
}

/** Admins load a cycle the day before it starts, so the next cycle is normal; the one after it is early. */
const EARLY_CYCLES_AHEAD = 2

export const percent = (share: number): string => `${(Math.round(share * 1000) / 10).toFixed(1)}%`

export function cycleWarnings (cycle: ReviewedCycle, options: CycleWarningOptions): CycleWarning[] {
  const warnings: CycleWarning[] = []
  const missing = cycle.missingTowns.length + cycle.missingTownsNotListed
  if (cycle.previousValidFrom !== null && cycle.previousTowns > 0 && missing / cycle.previousTowns > options.missingTownsShare) {
    warnings.push({
      kind: 'missing_towns',
      detail: `Cycle ${cycle.validFrom} would lack ${missing} of the ${cycle.previousTowns} towns of cycle ${cycle.previousValidFrom} ` +
        `(${percent(missing / cycle.previousTowns)}, more than ${percent(options.missingTownsShare)}).`
    })
  }
  const current = cycleOf(options.today).validFrom
  const ahead = monthIndex(cycle.validFrom) - monthIndex(current)
  if (ahead >= EARLY_CYCLES_AHEAD) {
    warnings.push({
      kind: 'early',
      detail: `Cycle ${cycle.validFrom} starts ${ahead} cycles after today's (${current} in Kenya): once uploaded, ` +
        `/v1/prices/latest serves it at once, though it is not in force until ${cycle.validFrom}.`
    })
  }
  return warnings
}
