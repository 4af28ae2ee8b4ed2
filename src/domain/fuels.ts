/** The three fuels in the contract's order: JSON key and column, PriceRow field, CSV column label (spec 4.5 rule 3). */
export const FUELS = [
  { key: 'super_petrol', field: 'superPetrol', label: 'Super (PMS)' },
  { key: 'diesel', field: 'diesel', label: 'Diesel (AGO)' },
  { key: 'kerosene', field: 'kerosene', label: 'Kerosene (IK)' }
] as const

export type Fuel = typeof FUELS[number]

export type FuelKey = Fuel['key']

/** One value for each fuel, keyed as the contract keys them. */
export function perFuel<T> (value: (fuel: Fuel) => T): Record<FuelKey, T> {
  const values = {} as Record<FuelKey, T>
  for (const fuel of FUELS) values[fuel.key] = value(fuel)
  return values
}
