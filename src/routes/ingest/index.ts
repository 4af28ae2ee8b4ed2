import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../../config.js'
import { rowsOfBatch, type IngestOutcome, type PriceRow, type RowBatch } from '../../domain/price-rows.js'
import { operations, type DryRunCycle, type DryRunPrices, type DryRunResponse } from '../../generated/openapi.js'
import { bearerAuth } from '../../auth/bearer-auth.js'
import { continueIfExpected } from '../../http-server/request-framing.js'
import { acceptUploads, contentEncodingError, readCsvUpload } from '../../ingest/multipart-upload.js'
import { acceptedCycleWindow, todayInKenya } from '../../domain/cycle.js'
import { perFuel } from '../../domain/fuels.js'
import { cycleWarnings, type CycleWarningOptions } from '../../ingest/cycle-warnings.js'
import { REVIEW_LIMITS, reviewCycles, type CycleReview, type FuelCents } from '../../ingest/plausibility.js'
import { csvRowBatches, type ReadsBeside } from '../../ingest/csv-off-thread.js'
import { Slices } from '../../ingest/slices.js'
import { UploadQueue, type UploadPlace } from '../../ingest/upload-queue.js'

interface IngestRoutesOptions {
  config: Pick<Config, 'ingestToken' | 'maxUploadBytes' | 'ingestWarnShare' | 'ingestMissingTownsShare' | 'uploadQueueSize' | 'now'>
  /** How long an ingest waits for a running withdrawal's or ingest's turn (tests shorten it). */
  lockWaitMs?: number
}

const INVALID_TOKEN = 'Invalid authorization token for ingestion endpoint.'

/** `?dry_run=true` is deprecated since 2026-11-22, written as RFC 9745 wants: a Unix time (D43). */
const DRY_RUN_DEPRECATED = '@1795305600'

/** The old `?dry_run=true`, out of the contract but still honoured (D43). */
const IngestLegacyQuery = Type.Object({ dry_run: Type.Boolean({ default: false }) })

const ingest: FastifyPluginAsyncTypebox<IngestRoutesOptions> = async (app, { config, lockWaitMs }) => {
  // The token first, after the limiter so a wrong token counts (D48); only then is the body invited.
  const checkToken = bearerAuth({ token: config.ingestToken, detail: INVALID_TOKEN, failures: app.failedTokens })
  const queue = new UploadQueue(config.uploadQueueSize)
  const places = new WeakMap<FastifyRequest, UploadPlace>()
  app.addHook('preParsing', async (request, reply) => {
    await checkToken(request)
    const encoded = contentEncodingError(request)
    if (encoded !== undefined) throw encoded
    // A place among this process's uploads, or 503 before the body is invited (D57).
    places.set(request, queue.enter(reply))
    continueIfExpected(request, reply)
  })
  await acceptUploads(app, config.maxUploadBytes)

  const inPlace = async <T>(request: FastifyRequest, work: () => Promise<T>): Promise<T> => {
    const place = places.get(request)
    place?.start()
    try {
      return await work()
    } finally {
      place?.finish()
    }
  }

  /** The file's validated rows, batch by batch as they are parsed (spec 4.5, D4–D10: every 400), read in slices (D57). */
  const readBatches = async (request: FastifyRequest, slices: Slices, now: Date, beside?: ReadsBeside): Promise<AsyncGenerator<RowBatch, void, undefined>> => {
    const bytes = await readCsvUpload(request, config.maxUploadBytes)
    // Rows outside the accepted window of cycles are refused as hostile input (D48).
    return csvRowBatches(bytes, acceptedCycleWindow(now), slices, beside)
  }

  /** What an upload would do: the counts and each cycle's review, from one read of what is stored (D40). */
  const dryRun = async (request: FastifyRequest): Promise<DryRunResponse> => {
    const slices = new Slices()
    const now = config.now?.() ?? new Date()
    const whole = { today: todayInKenya(now), missingTownsShare: config.ingestMissingTownsShare }
    const rows: PriceRow[] = []
    for await (const batch of await readBatches(request, slices, now)) for (const row of rowsOfBatch(batch)) rows.push(row)
    const review = await reviewCycles(rows, await app.prices.storedForReview(rows), config.ingestWarnShare, REVIEW_LIMITS, slices)
    let inserted = 0
    let updated = 0
    for (const c of review) {
      inserted += c.inserted
      updated += c.updated
    }
    const outcome: IngestOutcome = { recordsProcessed: rows.length, inserted, updated, unchanged: rows.length - inserted - updated, cycles: review }
    request.log.info({ dryRun: true, ...logFields(outcome) }, 'csv ingest dry run')
    return { status: 'dry_run', records_processed: rows.length, inserted, updated, unchanged: outcome.unchanged, cycles: review.map((c) => dryRunCycle(c, whole)) }
  }

  app.route({
    ...operations.dryRunIngestCsv,
    handler: async (request) => await inPlace(request, async () => await dryRun(request))
  })

  app.route({
    ...operations.ingestCsv,
    schema: { ...operations.ingestCsv.schema, querystring: IngestLegacyQuery },
    handler: async (request, reply) => {
      if (request.query.dry_run) {
        // The deprecated spelling answers as its successor does (no-store: this route's own answers are public), and says so (D43).
        void reply.header('cache-control', 'no-store').header('deprecation', DRY_RUN_DEPRECATED)
          .header('link', `<${operations.dryRunIngestCsv.url}>; rel="successor-version"`)
        return await reply.code(200 as never).send(await inPlace(request, async () => await dryRun(request)) as never)
      }
      return await inPlace(request, async () => {
        // Spec 4.5: every row is checked before the write commits; the COPY takes each batch as it is parsed, or once the whole file is, while reads go on (D46).
        const beside: ReadsBeside = { lastRequestAt: app.metrics.lastRequestAt, since: request.startedAt }
        const batches = await readBatches(request, new Slices(), config.now?.() ?? new Date(), beside)
        const outcome = await app.commitAndInvalidate({
          run: async (notifyPayload) => await app.prices.ingest(batches, { notifyPayload, lockWaitMs }),
          changedCycles: (outcome) => outcome.cycles.map((c) => c.validFrom),
          count: (outcome) => {
            app.metrics.ingests.inc()
            app.metrics.rowsIngested.inc(outcome.recordsProcessed)
          }
        })
        request.log.info({ ...logFields(outcome), parseTookTurns: beside.tookTurns, parseRestedMs: beside.restedMs === undefined ? undefined : Math.round(beside.restedMs) }, 'csv ingested')
        void reply.code(201)
        return {
          status: 'success' as const,
          records_processed: outcome.recordsProcessed,
          timestamp: utcTimestamp(new Date()), // UTC, to the second, with a Z (D16)
          inserted: outcome.inserted,
          updated: outcome.updated,
          unchanged: outcome.unchanged
        }
      })
    }
  })
}

function logFields (outcome: IngestOutcome): Record<string, number | string | undefined> {
  const { recordsProcessed, inserted, updated, unchanged, cycles } = outcome
  return { recordsProcessed, inserted, updated, unchanged, newestCycle: cycles[0]?.validFrom }
}

/** A cycle's review as the contract words it, prices in KSh (the review counts whole cents). */
function dryRunCycle (c: CycleReview, whole: CycleWarningOptions): DryRunCycle {
  return {
    valid_from: c.validFrom,
    valid_to: c.validTo,
    previous_valid_from: c.previousValidFrom,
    new_towns: c.newTowns,
    new_towns_not_listed: c.newTownsNotListed,
    missing_towns: c.missingTowns,
    missing_towns_not_listed: c.missingTownsNotListed,
    warnings: c.warnings.map((w) => ({
      line: w.line,
      town: w.town,
      fuel: w.fuel,
      kind: w.kind,
      detail: w.detail,
      price: w.price / 100,
      previous: w.previous === null ? null : w.previous / 100
    })),
    warnings_not_listed: c.warningsNotListed,
    cycle_warnings: cycleWarnings(c, whole), // a partial or early cycle (D73)
    changes: c.changes.map((change) => ({ town: change.town, previous: shillings(change.previous), price: shillings(change.price) })),
    changes_not_listed: c.changesNotListed
  }
}

function shillings (prices: FuelCents): DryRunPrices {
  return perFuel(({ key }) => prices[key] / 100)
}

function utcTimestamp (date: Date): string {
  return date.toISOString().slice(0, 19) + 'Z'
}

export default fp(ingest, {
  name: 'ingest-routes',
  dependencies: ['prices-repository', 'read-cache', 'cache-invalidation', 'cache-purge', 'metrics', 'rate-limit', 'http-caching', 'errors', 'bearer-auth'],
  encapsulate: true
})
