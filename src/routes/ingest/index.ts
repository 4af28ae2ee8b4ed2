import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../../config.js'
import type { IngestOutcome } from '../../ingest/review.js'
import { operations, type DryRunCycle, type DryRunPrices, type DryRunResponse } from '../../generated/openapi.js'
import { bearerAuth } from '../../auth/bearer-auth.js'
import { continueIfExpected } from '../../http-server/request-framing.js'
import { acceptUploads, contentEncodingError, readCsvUpload } from '../../ingest/multipart-upload.js'
import { plausibleCycles } from '../../domain/cycle.js'
import type { PriceRow } from '../../ingest/csv.js'
import type { CycleReview, FuelCents } from '../../ingest/plausibility.js'
import { Slices, decodeCsvInSlices, rowsInSlices } from '../../ingest/slices.js'
import { UploadQueue, type UploadPlace } from '../../ingest/upload-queue.js'

interface IngestRoutesOptions {
  config: Pick<Config, 'ingestToken' | 'maxUploadBytes' | 'ingestWarnShare' | 'uploadQueueSize'>
}

const INVALID_TOKEN = 'Invalid authorization token for ingestion endpoint.'

/** D26: the longest an ingest waits to hear its own notification back before answering. */
const NOTIFY_WAIT_MS = 2000

/** D43: `?dry_run=true` is deprecated since 2026-11-22 (RFC 9745: a Unix time). */
const DRY_RUN_DEPRECATED = '@1795305600'

/** D43: the old `?dry_run=true`, out of the contract but still honoured. */
const IngestLegacyQuery = Type.Object({ dry_run: Type.Boolean({ default: false }) })

const ingest: FastifyPluginAsyncTypebox<IngestRoutesOptions> = async (app, { config }) => {
  // D13 token first, after the limiter so a wrong token counts (D48); only then is the body invited.
  const checkToken = bearerAuth({ token: config.ingestToken, detail: INVALID_TOKEN, failures: app.failedTokens })
  const queue = new UploadQueue(config.uploadQueueSize)
  const places = new WeakMap<FastifyRequest, UploadPlace>()
  app.addHook('preParsing', async (request, reply) => {
    await checkToken(request)
    const encoded = contentEncodingError(request)
    if (encoded !== undefined) throw encoded
    // D57: a place among the uploads this process handles at once, or 503 before the body is invited.
    places.set(request, queue.enter(reply))
    continueIfExpected(request, reply)
  })
  await acceptUploads(app, config.maxUploadBytes)

  /** The upload's work, holding its place in the queue until it is done. */
  const inPlace = async <T>(request: FastifyRequest, work: () => Promise<T>): Promise<T> => {
    const place = places.get(request)
    place?.start()
    try {
      return await work()
    } finally {
      place?.finish()
    }
  }

  /** The file's validated rows (spec 4.5, D4–D10: every 400), read in slices (D57), in csv.ts's pieces. */
  const readRows = async (request: FastifyRequest): Promise<PriceRow[][]> => {
    const slices = new Slices()
    const text = await decodeCsvInSlices(await readCsvUpload(request, config.maxUploadBytes), slices)
    const pieces: PriceRow[][] = []
    for await (const piece of rowsInSlices(text, plausibleCycles(), slices)) pieces.push(piece) // D48 cycle window
    return pieces
  }

  /** What an upload would do: the counts and each cycle's review, from one read of what is stored (D40). */
  const dryRun = async (request: FastifyRequest): Promise<DryRunResponse> => {
    const rows: PriceRow[] = []
    for (const piece of await readRows(request)) for (const row of piece) rows.push(row)
    const review = await app.prices.review(rows, config.ingestWarnShare)
    let inserted = 0
    let updated = 0
    for (const c of review) {
      inserted += c.inserted
      updated += c.updated
    }
    const unchanged = rows.length - inserted - updated
    request.log.info({ dryRun: true, recordsProcessed: rows.length, inserted, updated, unchanged, newestCycle: review[0]?.validFrom }, 'csv ingest dry run')
    return { status: 'dry_run', records_processed: rows.length, inserted, updated, unchanged, cycles: review.map(dryRunCycle) }
  }

  app.route({
    ...operations.dryRunIngestCsv,
    handler: async (request, reply) => {
      // A dry run describes one moment of the table: nothing for a cache to keep.
      void reply.header('cache-control', 'no-store')
      return await inPlace(request, async () => await dryRun(request))
    }
  })

  app.route({
    ...operations.ingestCsv,
    schema: { ...operations.ingestCsv.schema, querystring: IngestLegacyQuery },
    handler: async (request, reply) => {
      if (request.query.dry_run) {
        // D43: the deprecated spelling of the dry run answers as its successor does, and says so.
        void reply.header('cache-control', 'no-store').header('deprecation', DRY_RUN_DEPRECATED)
          .header('link', `<${operations.dryRunIngestCsv.url}>; rel="successor-version"`)
        return await reply.code(200 as never).send(await inPlace(request, async () => await dryRun(request)) as never)
      }
      return await inPlace(request, async () => {
        // Spec 4.5, D4–D10: the whole file is checked, in slices, before anything is written (D57).
        const batches = await readRows(request)
        const notification = app.cacheInvalidation.expect(NOTIFY_WAIT_MS)
        let outcome
        try {
          outcome = await app.prices.ingest(batches, { notifyPayload: notification.payload })
        } catch (err) {
          notification.cancel()
          throw err
        }
        request.log.info(logFields(outcome), 'csv ingested')
        // Spec 4.2 rule 6, D26 cache invalidation: cleared after COMMIT, answered once every replica heard.
        app.readCache.clear()
        await notification.heard
        await app.cachePurge.changed(outcome.cycles.map((c) => c.validFrom))
        app.metrics.ingests.inc()
        app.metrics.rowsIngested.inc(outcome.recordsProcessed)
        void reply.code(201)
        return {
          status: 'success' as const,
          records_processed: outcome.recordsProcessed, // D15 counts
          timestamp: utcTimestamp(new Date()), // D16 timestamp format
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
function dryRunCycle (c: CycleReview): DryRunCycle {
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
    changes: c.changes.map((change) => ({ town: change.town, previous: shillings(change.previous), price: shillings(change.price) })),
    changes_not_listed: c.changesNotListed
  }
}

function shillings (prices: FuelCents): DryRunPrices {
  return { super_petrol: prices.super_petrol / 100, diesel: prices.diesel / 100, kerosene: prices.kerosene / 100 }
}

function utcTimestamp (date: Date): string {
  return date.toISOString().slice(0, 19) + 'Z'
}

export default fp(ingest, {
  name: 'ingest-routes',
  dependencies: ['prices-repository', 'read-cache', 'cache-invalidation', 'cache-purge', 'metrics', 'rate-limit', 'http-caching', 'errors', 'bearer-auth'],
  encapsulate: true
})
