import { insertPrices, resetData } from '../helper.js'

/** Three cycles of five towns; ids 1..15 in insertion order (cycle by cycle, towns as listed). */
export const TOWNS = ['Nairobi', 'Mombasa', 'Elburgon', 'El Wak', "Moi's Bridge"]
export const CYCLES = [
  { validFrom: '2026-09-15', validTo: '2026-10-14' },
  { validFrom: '2026-10-15', validTo: '2026-11-14' },
  { validFrom: '2026-08-15', validTo: '2026-09-14' }
]

export interface ApiPrice {
  id: number
  town: string
  super_petrol: number
  diesel: number
  kerosene: number
  valid_from: string
  valid_to: string
}

const cents = (x: number): number => Math.round(x * 100) / 100

/** The rows the fixture stores, as the API returns them. */
export const STORED: ApiPrice[] = CYCLES.flatMap((cycle, c) => TOWNS.map((town, i) => ({
  id: c * TOWNS.length + i + 1,
  town,
  super_petrol: cents(180 + c + i / 10 + 0.05),
  diesel: cents(170 + c + i / 10),
  kerosene: cents(150.5 + c),
  valid_from: cycle.validFrom,
  valid_to: cycle.validTo
})))

export async function seedFixture (): Promise<void> {
  await resetData()
  await insertPrices(STORED.map((p) => ({
    town: p.town,
    superPetrol: p.super_petrol.toFixed(2),
    diesel: p.diesel.toFixed(2),
    kerosene: p.kerosene.toFixed(2),
    validFrom: p.valid_from
  })))
}

const lowerC = (s: string): string => s.toLowerCase()
const byteCompare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** D2 order, computed independently of the SQL: valid_from desc, lower(town) byte-wise, id. */
export function inD2Order (rows: ApiPrice[]): ApiPrice[] {
  return [...rows].sort((a, b) =>
    byteCompare(b.valid_from, a.valid_from) || byteCompare(lowerC(a.town), lowerC(b.town)) || a.id - b.id)
}
