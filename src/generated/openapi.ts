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

export const Cycle = Type.Object({
  valid_from: Type.String({ format: "date" }),
  valid_to: Type.String({ format: "date" })
}, { additionalProperties: false })
export type Cycle = Static<typeof Cycle>

export const IngestResponse = Type.Object({
  status: Type.Literal("success"),
  records_processed: Type.Integer({ description: "Data rows of the file, each inserted or updated (D15); inserted + updated + unchanged." }),
  timestamp: Type.String({ description: "When ingestion completed, UTC, whole seconds.", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$" }),
  inserted: Type.Integer({ description: "Rows that were new." }),
  updated: Type.Integer({ description: "Rows whose prices changed an existing (town, valid_from)." }),
  unchanged: Type.Integer({ description: "Rows identical to what was already stored (left untouched)." })
}, { additionalProperties: false })
export type IngestResponse = Static<typeof IngestResponse>

export const DryRunResponse = Type.Object({
  status: Type.Literal("dry_run"),
  records_processed: Type.Integer({ description: "Data rows of the file." }),
  inserted: Type.Integer({ description: "Rows that would be new." }),
  updated: Type.Integer({ description: "Rows that would change an existing (town, valid_from)." }),
  unchanged: Type.Integer({ description: "Rows identical to what is already stored." }),
  cycles: Type.Array(Cycle, { description: "The cycles the file touches, newest first." })
}, { additionalProperties: false })
export type DryRunResponse = Static<typeof DryRunResponse>

export const PricesCsv = Type.String({ description: "RFC 4180 CSV in the format `POST /v1/ingest/csv` reads: the header line, then one line per\nrecord in the order of the JSON answer; dates `DD-MM-YYYY`, prices with two decimals, a\ntown quoted when it contains a comma, a quote or a line break; lines end with CRLF.\n", pattern: "^From,To,Town,Super \\(PMS\\),Diesel \\(AGO\\),Kerosene \\(IK\\)\\r\\n" })
export type PricesCsv = Static<typeof PricesCsv>

export const Health = Type.Object({
  status: Type.Literal("healthy")
}, { additionalProperties: false })
export type Health = Static<typeof Health>

export const ErrorResponse = Type.Object({
  detail: Type.String()
}, { additionalProperties: false })
export type ErrorResponse = Static<typeof ErrorResponse>

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
  town: Type.Optional(Type.String({ description: "Town name, compared case-insensitively after trimming and collapsing white space.", maxLength: 200 })),
  start_date: Type.Optional(Type.String({ description: "Only records with `valid_from` on or after this date.", format: "date" })),
  end_date: Type.Optional(Type.String({ description: "Only records with `valid_to` on or before this date.", format: "date" })),
  limit: Type.Optional(Type.Integer({ description: "Page size. For CSV export (`format=csv` or `Accept: text/csv`) an absent `limit` means every matching row.", minimum: 1, maximum: 1000, default: 100 })),
  offset: Type.Optional(Type.Integer({ description: "Number of records skipped.", minimum: 0, default: 0 })),
  format: Type.Optional(Type.Unsafe<"json" | "csv">({"type":"string","enum":["json","csv"],"description":"`json` or `csv`. Absent: CSV when the `Accept` header prefers `text/csv`, JSON\notherwise. Takes precedence over `Accept`.\n"}))
})
export type ListPricesQuery = Static<typeof ListPricesQuery>
export const ListPricesResponses = {
  200: Type.Array(FuelPrice),
  422: ValidationError,
  429: ErrorResponse,
  500: ErrorResponse
}

export const GetLatestPricesQuery = Type.Object({
  town: Type.Optional(Type.String({ description: "Town name, compared case-insensitively after trimming and collapsing white space.", maxLength: 200 }))
})
export type GetLatestPricesQuery = Static<typeof GetLatestPricesQuery>
export const GetLatestPricesResponses = {
  200: Type.Array(FuelPrice),
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

export const GetHealthQuery = Type.Object({})
export type GetHealthQuery = Static<typeof GetHealthQuery>
export const GetHealthResponses = {
  200: Health,
  500: ErrorResponse
}

export const IngestCsvQuery = Type.Object({
  dry_run: Type.Optional(Type.Boolean({ description: "Validate and count only; write nothing.", default: false }))
})
export type IngestCsvQuery = Static<typeof IngestCsvQuery>
export const IngestCsvResponses = {
  200: DryRunResponse,
  201: IngestResponse,
  400: ErrorResponse,
  401: ErrorResponse,
  413: ErrorResponse,
  415: ErrorResponse,
  422: ValidationError,
  429: ErrorResponse,
  500: ErrorResponse
}

export const GetOpenApiJsonQuery = Type.Object({})
export type GetOpenApiJsonQuery = Static<typeof GetOpenApiJsonQuery>
export const GetOpenApiJsonResponses = {
  200: Type.Object({
    openapi: Type.Literal("3.1.0"),
    info: Type.Object({}),
    paths: Type.Object({})
  })
}

export const GetOpenApiYamlQuery = Type.Object({})
export type GetOpenApiYamlQuery = Static<typeof GetOpenApiYamlQuery>
export const GetOpenApiYamlResponses = {}

/** Every operation of openapi.yaml, by operationId. */
export const operations = {
  listPrices: { method: 'GET', path: '/v1/prices' },
  getLatestPrices: { method: 'GET', path: '/v1/prices/latest' },
  listTowns: { method: 'GET', path: '/v1/towns' },
  getHealth: { method: 'GET', path: '/v1/health' },
  ingestCsv: { method: 'POST', path: '/v1/ingest/csv' },
  getOpenApiJson: { method: 'GET', path: '/v1/openapi.json' },
  getOpenApiYaml: { method: 'GET', path: '/v1/openapi.yaml' }
} as const
export type OperationId = keyof typeof operations
