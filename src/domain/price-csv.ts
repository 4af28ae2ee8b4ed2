/** The price CSV columns (spec 4.5 rule 3) in D6 canonical order, shared by ingest, export and sample. */
export const CSV_COLUMNS = ['From', 'To', 'Town', 'Super (PMS)', 'Diesel (AGO)', 'Kerosene (IK)'] as const

export const CSV_HEADER = CSV_COLUMNS.join(',')
