// GENERATED from openapi.yaml by scripts/generate-schemas.ts — do not edit.
// Run `npm run generate` after changing openapi.yaml; CI runs `npm run generate -- --check`.
/* eslint-disable */
import { Type, type Static } from '@sinclair/typebox'

export const FuelPrice = Type.Object({
  id: Type.Integer({ description: "Internal identifier, stable once written." }),
  town: Type.String({ description: "Title-cased town name, as listed by GET /v1/towns." }),
  super_petrol: Type.Number({ description: "Maximum retail price of Super Petrol (PMS), KSh per litre, two decimals." }),
  diesel: Type.Number({ description: "Maximum retail price of Diesel (AGO), KSh per litre, two decimals." }),
  kerosene: Type.Number({ description: "Maximum retail price of Kerosene (IK), KSh per litre, two decimals." }),
  valid_from: Type.String({ description: "First valid day, always the 15th of a month.", format: "date" }),
  valid_to: Type.String({ description: "Last valid day, always the 14th of the following month.", format: "date" })
}, { additionalProperties: false })
export type FuelPrice = Static<typeof FuelPrice>

export const PriceWarning = Type.Object({
  line: Type.Integer({ description: "Line of the file (the header is line 1)." }),
  town: Type.String(),
  fuel: Type.Unsafe<"super_petrol" | "diesel" | "kerosene">({"type":"string","enum":["super_petrol","diesel","kerosene"]}),
  kind: Type.Unsafe<"moved" | "outlier">({"type":"string","enum":["moved","outlier"]}),
  detail: Type.String({ description: "The warning in words, e.g. `Super (PMS) for Nairobi on line 7 moves 18.2% from 180.00 to 212.80 (cycle 2026-09-15).`" }),
  price: Type.Number({ description: "The file's price of this fuel, KSh per litre." }),
  previous: Type.Union([Type.Number(), Type.Null()], { description: "The same town's price of this fuel in the previous cycle; `null` when it has none there." })
}, { additionalProperties: false })
export type PriceWarning = Static<typeof PriceWarning>

export const CycleWarning = Type.Object({
  kind: Type.Unsafe<"missing_towns" | "early">({"type":"string","enum":["missing_towns","early"]}),
  detail: Type.String({ description: "The warning in words, e.g. `Cycle 2027-01-15 would lack 228 of the 233 towns of cycle 2026-12-15 (97.9%, more than 10.0%).`" })
}, { additionalProperties: false })
export type CycleWarning = Static<typeof CycleWarning>

export const DryRunPrices = Type.Object({
  super_petrol: Type.Number(),
  diesel: Type.Number(),
  kerosene: Type.Number()
}, { description: "A town's three prices, KSh per litre, two decimals.", additionalProperties: false })
export type DryRunPrices = Static<typeof DryRunPrices>

export const DryRunChange = Type.Object({
  town: Type.String(),
  previous: DryRunPrices,
  price: DryRunPrices
}, { description: "One town's prices in the previous cycle and in the file.", additionalProperties: false })
export type DryRunChange = Static<typeof DryRunChange>

export const DryRunCycle = Type.Object({
  valid_from: Type.String({ format: "date" }),
  valid_to: Type.String({ format: "date" }),
  previous_valid_from: Type.Union([Type.String({ format: "date" }), Type.Null()], { description: "The cycle compared with; `null` when there is none (then nothing is new or missing)." }),
  new_towns: Type.Array(Type.String(), { description: "Towns of this cycle that the previous cycle lacks, in D3 order. At most 1,000 are\nlisted for a whole dry run; `new_towns_not_listed` counts the rest.\n", maxItems: 1000 }),
  new_towns_not_listed: Type.Integer({ description: "This cycle's new towns beyond those listed.", minimum: 0 }),
  missing_towns: Type.Array(Type.String(), { description: "Towns of the previous cycle that this cycle would lack, in D3 order. At most 1,000\nare listed for a whole dry run; `missing_towns_not_listed` counts the rest.\n", maxItems: 1000 }),
  missing_towns_not_listed: Type.Integer({ description: "This cycle's missing towns beyond those listed.", minimum: 0 }),
  warnings: Type.Array(PriceWarning, { description: "Prices that look mistyped: one that moves more than INGEST_WARN_SHARE (default 15%)\nfrom the same town's previous price (`moved`), or that lies more than that share\noutside the range of the cycle's other towns (`outlier`). Never a reason to refuse\nthe real upload. At most 1,000 are listed for a whole dry run (newest cycle first,\neach cycle's in file order); `warnings_not_listed` counts the rest.\n", maxItems: 1000 }),
  warnings_not_listed: Type.Integer({ description: "This cycle's warnings beyond those listed (D48).", minimum: 0 }),
  cycle_warnings: Type.Array(CycleWarning, { description: "Warnings about the cycle as a whole (D73): it would lack more than\nINGEST_MISSING_TOWNS_SHARE (default 10%) of the previous cycle's towns\n(`missing_towns`), or it starts two or more cycles after today's in Kenya, so it would\nbe `/v1/prices/latest` at once, long before it is in force (`early`). Never a reason to\nrefuse the real upload.\n" }),
  changes: Type.Array(DryRunChange, { description: "Each town of the file's rows for this cycle that the previous cycle also has, in file\norder, with both prices of each fuel: what a reviewer charts. At most 5,000 towns\nare listed for a whole dry run; `changes_not_listed` counts the rest.\n", maxItems: 5000 }),
  changes_not_listed: Type.Integer({ description: "This cycle's towns with a previous price beyond those listed in `changes`.", minimum: 0 })
}, { description: "A cycle the file touches, compared with the cycle before it (the latest earlier one,\nstored or in the file) as it would stand after the upload. Every list is bounded for the\nwhole dry run, filled newest cycle first; a `_not_listed` count gives the rest (D48).\n", additionalProperties: false })
export type DryRunCycle = Static<typeof DryRunCycle>

export const FuelStats = Type.Object({
  min: Type.Number(),
  max: Type.Number(),
  mean: Type.Number({ description: "Rounded to two decimals." }),
  median: Type.Number({ description: "Rounded to two decimals (the mean of the two middle prices for an even count)." }),
  cheapest_town: Type.String(),
  dearest_town: Type.String()
}, { additionalProperties: false })
export type FuelStats = Static<typeof FuelStats>

export const CycleSummary = Type.Object({
  valid_from: Type.String({ format: "date" }),
  valid_to: Type.String({ format: "date" }),
  towns: Type.Integer({ description: "Records (one per town) in the cycle." }),
  published_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "UTC time of the first ingest that created the cycle; `null` for cycles stored before it was recorded." }),
  super_petrol: FuelStats,
  diesel: FuelStats,
  kerosene: FuelStats
}, { additionalProperties: false })
export type CycleSummary = Static<typeof CycleSummary>

export const FuelChange = Type.Object({
  price: Type.Number(),
  previous: Type.Union([Type.Number(), Type.Null()], { description: "The town's price in the cycle before; `null` when it had no record then." }),
  change: Type.Union([Type.Number(), Type.Null()], { description: "`price - previous`, two decimals; `null` when there is no previous price." })
}, { additionalProperties: false })
export type FuelChange = Static<typeof FuelChange>

export const PriceChange = Type.Object({
  town: Type.String(),
  valid_from: Type.String({ format: "date" }),
  valid_to: Type.String({ format: "date" }),
  previous_valid_from: Type.Union([Type.String({ format: "date" }), Type.Null()], { description: "The cycle compared with, when the town had a record in it." }),
  super_petrol: FuelChange,
  diesel: FuelChange,
  kerosene: FuelChange
}, { additionalProperties: false })
export type PriceChange = Static<typeof PriceChange>

export const IngestResponse = Type.Object({
  status: Type.Literal("success"),
  records_processed: Type.Integer({ description: "Data rows of the file, each inserted or updated (D15); inserted + updated + unchanged." }),
  timestamp: Type.String({ description: "When ingestion completed, UTC, whole seconds.", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$" }),
  inserted: Type.Integer({ description: "Rows that were new." }),
  updated: Type.Integer({ description: "Rows whose prices changed an existing (town, valid_from)." }),
  unchanged: Type.Integer({ description: "Rows identical to what was already stored (left untouched)." })
}, { additionalProperties: false })
export type IngestResponse = Static<typeof IngestResponse>

export const WithdrawResponse = Type.Object({
  status: Type.Literal("withdrawn"),
  valid_from: Type.String({ format: "date" }),
  valid_to: Type.String({ format: "date" }),
  rows_removed: Type.Integer({ description: "Records (one per town) of the cycle that were removed.", minimum: 1 })
}, { additionalProperties: false })
export type WithdrawResponse = Static<typeof WithdrawResponse>

export const DryRunResponse = Type.Object({
  status: Type.Literal("dry_run"),
  records_processed: Type.Integer({ description: "Data rows of the file." }),
  inserted: Type.Integer({ description: "Rows that would be new." }),
  updated: Type.Integer({ description: "Rows that would change an existing (town, valid_from)." }),
  unchanged: Type.Integer({ description: "Rows identical to what is already stored." }),
  cycles: Type.Array(DryRunCycle, { description: "The cycles the file touches, newest first, each compared with the cycle before it." })
}, { additionalProperties: false })
export type DryRunResponse = Static<typeof DryRunResponse>

export const PricesCsv = Type.String({ description: "RFC 4180 CSV in the format `POST /v1/ingest/csv` reads: the header line, then one line per\nrecord in the order of the JSON answer; dates `DD-MM-YYYY`, prices with two decimals, a\ntown quoted when it contains a comma, a quote or a line break; lines end with CRLF.\n", pattern: "^From,To,Town,Super \\(PMS\\),Diesel \\(AGO\\),Kerosene \\(IK\\)\\r\\n" })
export type PricesCsv = Static<typeof PricesCsv>

export const Health = Type.Object({
  status: Type.Literal("healthy"),
  latest_valid_from: Type.Union([Type.String({ format: "date" }), Type.Null()], { description: "First day of the latest stored cycle (D1); `null` on an empty database." }),
  current_cycle_loaded: Type.Boolean({ description: "Whether the cycle covering today's date in Africa/Nairobi is stored." })
}, { description: "`status` is the specified answer; the other two fields are additions for probes that\nwatch freshness as well as reachability.\n", additionalProperties: false })
export type Health = Static<typeof Health>

export const ErrorResponse = Type.Object({
  detail: Type.String()
}, { additionalProperties: false })
export type ErrorResponse = Static<typeof ErrorResponse>

export const CsvColumn = Type.Unsafe<"From" | "To" | "Town" | "Super (PMS)" | "Diesel (AGO)" | "Kerosene (IK)">({"type":"string","enum":["From","To","Town","Super (PMS)","Diesel (AGO)","Kerosene (IK)"],"description":"A column of the price CSV, by its canonical name."})
export type CsvColumn = Static<typeof CsvColumn>

export const CsvRejection = Type.Object({
  detail: Type.String(),
  line: Type.Optional(Type.Integer({ description: "The physical line the fault is on (the header is line 1): the row of a row fault (D51),\nthe line read as the header, or the line where the text stops being UTF-8.\n", minimum: 1 })),
  column: Type.Optional(CsvColumn),
  problem: Type.Optional(Type.Unsafe<"empty_file" | "sep_line" | "delimiter" | "title_row" | "misspelt_column" | "missing_columns" | "encoding" | "invalid_utf8" | "date_format" | "no_such_date" | "empty_price" | "comma_decimal" | "thousands_separator" | "too_many_decimals" | "currency_or_unit" | "exponent" | "not_a_number">({"type":"string","enum":["empty_file","sep_line","delimiter","title_row","misspelt_column","missing_columns","encoding","invalid_utf8","date_format","no_such_date","empty_price","comma_decimal","thousands_separator","too_many_decimals","currency_or_unit","exponent","not_a_number"],"description":"The cause, when it is recognised; `hint` then says how to fix it. Header:\n`empty_file`, `sep_line` (a `sep=` first line), `delimiter` (`;` or tab, named by\n`delimiter`), `title_row` (the header is on a later line), `misspelt_column`,\n`missing_columns`. Text: `encoding` (UTF-16 or Windows-1252, named by `encoding`),\n`invalid_utf8`. Dates: `date_format`, `no_such_date`. Prices: `empty_price`,\n`comma_decimal`, `thousands_separator`, `too_many_decimals`, `currency_or_unit`,\n`exponent`, `not_a_number`.\n"})),
  hint: Type.Optional(Type.String({ description: "What to change in the file, in words, e.g. `Write a point before the decimals, not a comma: 178.90, not 178,90.`" })),
  missing_columns: Type.Optional(Type.Array(CsvColumn, { description: "On a header fault, the required columns the header lacks, in canonical order." })),
  found_columns: Type.Optional(Type.Array(Type.String(), { description: "On a header fault, the cells of the line read as the header (at most 32, each cut as `detail` cuts a cell).", maxItems: 32 })),
  delimiter: Type.Optional(Type.Unsafe<";" | "\t">({"type":"string","enum":[";","\t"],"description":"The separator the file seems to use instead of a comma."})),
  encoding: Type.Optional(Type.Unsafe<"UTF-16LE" | "UTF-16BE" | "Windows-1252">({"type":"string","enum":["UTF-16LE","UTF-16BE","Windows-1252"],"description":"The encoding the file seems to be saved in instead of UTF-8."})),
  date_format: Type.Optional(Type.Unsafe<"DD-MM-YYYY" | "YYYY-MM-DD">({"type":"string","enum":["DD-MM-YYYY","YYYY-MM-DD"],"description":"On a date fault, the format this file's dates are read in, fixed by its first date cell."}))
}, { description: "An upload refused (D72). `detail` is worded as the contract fixes it, for clients that\ncompare it whole; the other fields, present where they apply, tell an admin what to fix.\n", additionalProperties: false })
export type CsvRejection = Static<typeof CsvRejection>

export const ValidationErrorItem = Type.Object({
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  msg: Type.String(),
  type: Type.String()
}, { additionalProperties: false })
export type ValidationErrorItem = Static<typeof ValidationErrorItem>

export const ValidationError = Type.Object({
  detail: Type.Array(ValidationErrorItem)
}, { additionalProperties: false })
export type ValidationError = Static<typeof ValidationError>

export const ListPricesQuery = Type.Object({
  town: Type.Optional(Type.String({ description: "Town name, compared case-insensitively after trimming and collapsing white space.", pattern: "^[^\\x00]*$", maxLength: 200 })),
  start_date: Type.Optional(Type.String({ description: "Only records with `valid_from` on or after this date.", format: "date", pattern: "^(?!0000-)" })),
  end_date: Type.Optional(Type.String({ description: "Only records with `valid_to` on or before this date.", format: "date", pattern: "^(?!0000-)" })),
  limit: Type.Integer({ description: "Page size.", minimum: 1, maximum: 1000, default: 100 }),
  offset: Type.Integer({ description: "Number of records skipped.", minimum: 0, maximum: 2147483647, default: 0 })
})
export type ListPricesQuery = Static<typeof ListPricesQuery>
export const ListPricesResponses = {
  200: Type.Array(FuelPrice),
  422: ValidationError,
  429: ErrorResponse,
  500: ErrorResponse,
  503: ErrorResponse
}

export const ExportPricesCsvQuery = Type.Object({
  town: Type.Optional(Type.String({ description: "Town name, compared case-insensitively after trimming and collapsing white space.", pattern: "^[^\\x00]*$", maxLength: 200 })),
  start_date: Type.Optional(Type.String({ description: "Only records with `valid_from` on or after this date.", format: "date", pattern: "^(?!0000-)" })),
  end_date: Type.Optional(Type.String({ description: "Only records with `valid_to` on or before this date.", format: "date", pattern: "^(?!0000-)" })),
  limit: Type.Optional(Type.Integer({ description: "At most this many records; absent means every matching record.", minimum: 1, maximum: 1000 })),
  offset: Type.Integer({ description: "Number of records skipped.", minimum: 0, maximum: 2147483647, default: 0 })
})
export type ExportPricesCsvQuery = Static<typeof ExportPricesCsvQuery>
export const ExportPricesCsvResponses = {
  422: ValidationError,
  429: ErrorResponse,
  500: ErrorResponse,
  503: ErrorResponse
}

export const GetLatestPricesQuery = Type.Object({
  town: Type.Optional(Type.String({ description: "Town name, compared case-insensitively after trimming and collapsing white space.", pattern: "^[^\\x00]*$", maxLength: 200 }))
})
export type GetLatestPricesQuery = Static<typeof GetLatestPricesQuery>
export const GetLatestPricesResponses = {
  200: Type.Array(FuelPrice),
  422: ValidationError,
  429: ErrorResponse,
  500: ErrorResponse
}

export const ListPriceChangesQuery = Type.Object({
  town: Type.Optional(Type.String({ description: "Town name, compared case-insensitively after trimming and collapsing white space.", pattern: "^[^\\x00]*$", maxLength: 200 })),
  valid_from: Type.Optional(Type.String({ description: "First day of the cycle (a 15th); absent means the latest cycle.", format: "date", pattern: "^(?!0000-)" }))
})
export type ListPriceChangesQuery = Static<typeof ListPriceChangesQuery>
export const ListPriceChangesResponses = {
  200: Type.Array(PriceChange),
  404: ErrorResponse,
  422: ValidationError,
  429: ErrorResponse,
  500: ErrorResponse
}

export const ListTownsQuery = Type.Object({})
export type ListTownsQuery = Static<typeof ListTownsQuery>
export const ListTownsResponses = {
  200: Type.Array(Type.String()),
  429: ErrorResponse,
  500: ErrorResponse
}

export const ListCyclesQuery = Type.Object({
  limit: Type.Integer({ description: "Page size.", minimum: 1, maximum: 1000, default: 100 }),
  offset: Type.Integer({ description: "Number of cycles skipped.", minimum: 0, maximum: 2147483647, default: 0 })
})
export type ListCyclesQuery = Static<typeof ListCyclesQuery>
export const ListCyclesResponses = {
  200: Type.Array(CycleSummary),
  422: ValidationError,
  429: ErrorResponse,
  500: ErrorResponse
}

export const GetCyclesFeedQuery = Type.Object({})
export type GetCyclesFeedQuery = Static<typeof GetCyclesFeedQuery>
export const GetCyclesFeedResponses = {
  429: ErrorResponse,
  500: ErrorResponse
}

export const GetCycleQuery = Type.Object({})
export type GetCycleQuery = Static<typeof GetCycleQuery>
export const GetCycleParams = Type.Object({
  valid_from: Type.String({ description: "First day of the cycle (a 15th).", format: "date", pattern: "^(?!0000-)" })
})
export type GetCycleParams = Static<typeof GetCycleParams>
export const GetCycleResponses = {
  200: CycleSummary,
  404: ErrorResponse,
  422: ValidationError,
  429: ErrorResponse,
  500: ErrorResponse
}

export const WithdrawCycleQuery = Type.Object({})
export type WithdrawCycleQuery = Static<typeof WithdrawCycleQuery>
export const WithdrawCycleParams = Type.Object({
  valid_from: Type.String({ description: "First day of the cycle (a 15th).", format: "date", pattern: "^(?!0000-)" })
})
export type WithdrawCycleParams = Static<typeof WithdrawCycleParams>
export const WithdrawCycleResponses = {
  200: WithdrawResponse,
  401: ErrorResponse,
  404: ErrorResponse,
  422: ValidationError,
  429: ErrorResponse,
  500: ErrorResponse,
  503: ErrorResponse,
  507: ErrorResponse
}

export const GetHealthQuery = Type.Object({})
export type GetHealthQuery = Static<typeof GetHealthQuery>
export const GetHealthResponses = {
  200: Health,
  500: ErrorResponse
}

export const IngestCsvQuery = Type.Object({})
export type IngestCsvQuery = Static<typeof IngestCsvQuery>
export const IngestCsvResponses = {
  201: IngestResponse,
  400: CsvRejection,
  401: ErrorResponse,
  413: ErrorResponse,
  415: ErrorResponse,
  422: ValidationError,
  429: ErrorResponse,
  500: ErrorResponse,
  503: ErrorResponse,
  507: ErrorResponse
}

export const DryRunIngestCsvQuery = Type.Object({})
export type DryRunIngestCsvQuery = Static<typeof DryRunIngestCsvQuery>
export const DryRunIngestCsvResponses = {
  200: DryRunResponse,
  400: CsvRejection,
  401: ErrorResponse,
  413: ErrorResponse,
  415: ErrorResponse,
  422: ValidationError,
  429: ErrorResponse,
  500: ErrorResponse,
  503: ErrorResponse,
  507: ErrorResponse
}

export const GetOpenApiJsonQuery = Type.Object({})
export type GetOpenApiJsonQuery = Static<typeof GetOpenApiJsonQuery>
export const GetOpenApiJsonResponses = {
  200: Type.Object({
    openapi: Type.Literal("3.1.0"),
    info: Type.Object({}, { additionalProperties: true }),
    paths: Type.Object({}, { additionalProperties: true })
  })
}

export const GetOpenApiYamlQuery = Type.Object({})
export type GetOpenApiYamlQuery = Static<typeof GetOpenApiYamlQuery>
export const GetOpenApiYamlResponses = {}

/**
 * Every operation of openapi.yaml by operationId: method, URL, schemas and route policy, ready to declare a
 * route with `app.route({ ...operations.listPrices, handler })`.
 */
export const operations = {
  listPrices: { method: 'GET', url: '/v1/prices', schema: { operationId: 'listPrices', querystring: ListPricesQuery, response: ListPricesResponses }, config: { publicCache: true } },
  exportPricesCsv: { method: 'GET', url: '/v1/prices.csv', schema: { operationId: 'exportPricesCsv', querystring: ExportPricesCsvQuery, response: ExportPricesCsvResponses }, config: { publicCache: true } },
  getLatestPrices: { method: 'GET', url: '/v1/prices/latest', schema: { operationId: 'getLatestPrices', querystring: GetLatestPricesQuery, response: GetLatestPricesResponses }, config: { publicCache: true } },
  listPriceChanges: { method: 'GET', url: '/v1/prices/changes', schema: { operationId: 'listPriceChanges', querystring: ListPriceChangesQuery, response: ListPriceChangesResponses }, config: { publicCache: true } },
  listTowns: { method: 'GET', url: '/v1/towns', schema: { operationId: 'listTowns', querystring: ListTownsQuery, response: ListTownsResponses }, config: { publicCache: true } },
  listCycles: { method: 'GET', url: '/v1/cycles', schema: { operationId: 'listCycles', querystring: ListCyclesQuery, response: ListCyclesResponses }, config: { publicCache: true } },
  getCyclesFeed: { method: 'GET', url: '/v1/cycles/feed.atom', schema: { operationId: 'getCyclesFeed', querystring: GetCyclesFeedQuery, response: GetCyclesFeedResponses }, config: { publicCache: true } },
  getCycle: { method: 'GET', url: '/v1/cycles/:valid_from', schema: { operationId: 'getCycle', params: GetCycleParams, querystring: GetCycleQuery, response: GetCycleResponses }, config: { publicCache: true } },
  withdrawCycle: { method: 'DELETE', url: '/v1/cycles/:valid_from', schema: { operationId: 'withdrawCycle', params: WithdrawCycleParams, querystring: WithdrawCycleQuery, response: WithdrawCycleResponses }, config: { publicCache: false } },
  getHealth: { method: 'GET', url: '/v1/health', schema: { operationId: 'getHealth', querystring: GetHealthQuery, response: GetHealthResponses }, config: { publicCache: false, rateLimit: false } },
  ingestCsv: { method: 'POST', url: '/v1/ingest/csv', schema: { operationId: 'ingestCsv', querystring: IngestCsvQuery, response: IngestCsvResponses }, config: { publicCache: true } },
  dryRunIngestCsv: { method: 'POST', url: '/v1/ingest/csv/dry-run', schema: { operationId: 'dryRunIngestCsv', querystring: DryRunIngestCsvQuery, response: DryRunIngestCsvResponses }, config: { publicCache: false } },
  getOpenApiJson: { method: 'GET', url: '/v1/openapi.json', schema: { operationId: 'getOpenApiJson', querystring: GetOpenApiJsonQuery, response: GetOpenApiJsonResponses }, config: { publicCache: false, rateLimit: false } },
  getOpenApiYaml: { method: 'GET', url: '/v1/openapi.yaml', schema: { operationId: 'getOpenApiYaml', querystring: GetOpenApiYamlQuery, response: GetOpenApiYamlResponses }, config: { publicCache: false, rateLimit: false } }
} as const
export type OperationId = keyof typeof operations
