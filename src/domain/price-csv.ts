/**
 * The price CSV's columns (spec 4.5 rule 3) with their display names, in the canonical order
 * that D6 names them in: one home for the header the ingest requires, the export writes and the
 * sample generator produces.
 */
export const CSV_COLUMNS = ['From', 'To', 'Town', 'Super (PMS)', 'Diesel (AGO)', 'Kerosene (IK)'] as const

export const CSV_HEADER = CSV_COLUMNS.join(',')
