import { FUELS, type Fuel } from './fuels.js'

/** The price CSV columns (spec 4.5 rule 3) in canonical order, shared by ingest, export and sample. */
export const CSV_COLUMNS: ReadonlyArray<'From' | 'To' | 'Town' | Fuel['label']> = ['From', 'To', 'Town', ...FUELS.map((fuel) => fuel.label)]

export const CSV_HEADER = CSV_COLUMNS.join(',')
