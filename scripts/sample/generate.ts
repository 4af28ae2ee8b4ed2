import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { cycleFrom, cycleStartingIn } from '../../src/domain/cycle.js'
import { CSV_HEADER } from '../../src/domain/price-csv.js'
import { csvDate, csvField } from '../../src/export/csv.js'
import { townKey } from '../../src/domain/town.js'
import { projectRoot } from '../../src/project-root.js'

/** Deterministic sample data as the ingest's CSV (spec 4.5), valid under D4–D9 (town, price, date and cycle rules). */

interface SampleOptions {
  towns: string[]
  /** How many consecutive cycles, the last of them starting at `lastValidFrom`. */
  cycles: number
  /** YYYY-MM-DD, a 15th (D8). */
  lastValidFrom: string
}

const SEED = 0x4b45 // 'KE'

/** Rough road distances from Mombasa, where fuel lands; other towns get a fixed pseudo-distance. */
const KM_FROM_MOMBASA: ReadonlyMap<string, number> = new Map([
  ['mombasa', 0], ['kilifi', 60], ['malindi', 120], ['voi', 160], ['lamu', 340],
  ['machakos', 440], ['nairobi', 485], ['thika', 530], ['nakuru', 640], ['nyeri', 640],
  ['meru', 720], ['eldoret', 800], ['kisumu', 830], ['kitale', 870], ['garissa', 850],
  ['marsabit', 1000], ['wajir', 1150], ['lodwar', 1150], ['moyale', 1250], ['mandera', 1300]
])

/** Per fuel, Mombasa price in cents around which months vary: base, seasonal swing, noise. */
const FUELS = [
  { base: 17_700, swing: 500, noise: 150 }, // Super (PMS): ~170–200
  { base: 16_700, swing: 500, noise: 150 }, // Diesel (AGO): ~160–190
  { base: 14_800, swing: 600, noise: 150 } // Kerosene (IK): ~140–172
] as const

const CENTS_PER_KM = 1.2 // up to ~16 KSh more at 1300 km, as far-flung towns pay in practice

export function sampleCycles ({ towns, cycles, lastValidFrom }: SampleOptions): string {
  const last = cycleFrom(lastValidFrom)
  if (last === null || !Number.isInteger(cycles) || cycles < 1) {
    throw new RangeError('sampleCycles needs cycles >= 1 and lastValidFrom on a 15th (YYYY-MM-DD)')
  }
  const [year, month] = lastValidFrom.split('-').map(Number) as [number, number]
  const lastMonth = year * 12 + month - 1
  const lines = [CSV_HEADER]
  for (let m = lastMonth - cycles + 1; m <= lastMonth; m++) {
    const cycle = cycleStartingIn(m)
    const from = csvDate(cycle.validFrom)
    const to = csvDate(cycle.validTo)
    for (const town of towns) {
      const surcharge = Math.round(kmFromMombasa(town) * CENTS_PER_KM)
      const prices = FUELS.map((fuel, i) => money(monthlyBase(fuel, m, i) + surcharge))
      lines.push([from, to, csvField(town), ...prices].join(','))
    }
  }
  return lines.join('\n') + '\n'
}

/** The 233 towns of scripts/sample/towns.txt, one per line. */
export function loadSampleTowns (): string[] {
  const text = readFileSync(join(projectRoot(), 'scripts', 'sample', 'towns.txt'), 'utf8')
  return text.split(/\r?\n/).map((t) => t.trim()).filter((t) => t !== '')
}

function monthlyBase (fuel: typeof FUELS[number], monthIndex: number, fuelIndex: number): number {
  const seasonal = Math.round(fuel.swing * Math.sin(monthIndex * 0.7 + fuelIndex))
  const jitter = (hash32(SEED, monthIndex, fuelIndex) % (2 * fuel.noise + 1)) - fuel.noise
  return fuel.base + seasonal + jitter
}

function kmFromMombasa (town: string): number {
  const key = townKey(town.trim())
  return KM_FROM_MOMBASA.get(key) ?? 100 + (hash32(SEED, ...[...key].map((c) => c.codePointAt(0) ?? 0)) % 1100)
}

/** A small integer hash (murmur3 finaliser per step): the same numbers give the same result. */
function hash32 (...values: number[]): number {
  let h = 0x811c9dc5
  for (const v of values) {
    h = Math.imul(h ^ v, 0x85ebca6b)
    h ^= h >>> 13
    h = Math.imul(h, 0xc2b2ae35)
    h ^= h >>> 16
  }
  return h >>> 0
}

/** Integer cents → '180.50': no float formatting is involved. */
function money (cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`
}
