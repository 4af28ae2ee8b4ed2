/**
 * The three regulated fuels, in the contract's order: each one's key in the API's JSON and the
 * database's column, its field in a validated row (PriceRow), and its column in the price CSV
 * (spec 4.5 rule 3), also the name messages and the feed give it.
 */
export const FUELS = [
  { key: 'super_petrol', field: 'superPetrol', label: 'Super (PMS)' },
  { key: 'diesel', field: 'diesel', label: 'Diesel (AGO)' },
  { key: 'kerosene', field: 'kerosene', label: 'Kerosene (IK)' }
] as const

export type Fuel = typeof FUELS[number]

export type FuelKey = Fuel['key']
