import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../../config.js'
import type { IngestOutcome } from '../../domain/price-rows.js'
import { operations, type DryRunResponse } from '../../generated/openapi.js'
import { bearerAuth } from '../../auth/bearer-auth.js'
import { continueIfExpected } from '../../http-server/request-framing.js'
import { acceptUploads, contentEncodingError, readCsvUpload } from '../../ingest/multipart-upload.js'
import { acceptedCycleWindow, todayInKenya } from '../../domain/cycle.js'
import { cycleCsvBatches, decodeCsv, parseCycleCsv } from '../../ingest/csv.js'
import { cycleWarnings } from '../../ingest/cycle-warnings.js'
import { reviewCycles } from '../../ingest/plausibility.js'

interface IngestRoutesOptions {
  config: Pick<Config, 'ingestToken' | 'maxUploadBytes' | 'ingestWarnShare' | 'ingestMissingTownsShare' | 'now'>
}

const INVALID_TOKEN = 'Invalid authorization token for ingestion endpoint.'

/** D48 hostile input: the most price warnings one dry run lists. */
export const MAX_WARNINGS_LISTED = 1000

/** D43: `?dry_run=true` is deprecated since 2026-11-22 (RFC 9745: a Unix time). */
const DRY_RUN_DEPRECATED = '@1795305600'

/** D43: the old `?dry_run=true`, out of the contract but still honoured. */
const IngestLegacyQuery = Type.Object({ dry_run: Type.Boolean({ default: false }) })

const ingest: FastifyPluginAsyncTypebox<IngestRoutesOptions> = async (app, { config }) => {
  // D13 token first, after the limiter so a wrong token counts (D48); only then is the body invited.
  const checkToken = bearerAuth({ token: config.ingestToken, detail: INVALID_TOKEN, failures: app.failedTokens })
  app.addHook('preParsing', async (request, reply) => {
    await checkToken(request)
    const encoded = contentEncodingError(request)
    if (encoded !== undefined) throw encoded
    continueIfExpected(request, reply)
  })
  await acceptUploads(app, config.maxUploadBytes)

  /** The file's validated rows (spec 4.5, D4–D10: every 400) and what an upload would do. */
  const dryRun = async (request: FastifyRequest): Promise<DryRunResponse> => {
    const now = config.now?.() ?? new Date()
    // Rows outside the accepted window of cycles are refused as hostile input (D48).
    const rows = parseCycleCsv(decodeCsv(await readCsvUpload(request, config.maxUploadBytes)), acceptedCycleWindow(now))
    const whole = { today: todayInKenya(now), missingTownsShare: config.ingestMissingTownsShare }
    const outcome = await app.prices.count(rows)
    const review = reviewCycles(rows, await app.prices.storedForReview(rows), config.ingestWarnShare)
    request.log.info({ dryRun: true, ...logFields(outcome) }, 'csv ingest dry run')
    let budget = MAX_WARNINGS_LISTED
    return {
      status: 'dry_run',
      records_processed: outcome.recordsProcessed,
      inserted: outcome.inserted,
      updated: outcome.updated,
      unchanged: outcome.unchanged,
      cycles: review.map((c) => {
        // D48: a bounded answer, whatever the file: the first MAX_WARNINGS_LISTED, then counts.
        const listed = c.warnings.slice(0, Math.max(0, budget))
        budget -= listed.length
        return {
          valid_from: c.validFrom,
          valid_to: c.validTo,
          previous_valid_from: c.previousValidFrom,
          new_towns: c.newTowns,
          missing_towns: c.missingTowns,
          warnings: listed,
          warnings_not_listed: c.warnings.length - listed.length,
          cycle_warnings: cycleWarnings(c, whole) // D73: a partial or early cycle
        }
      })
    }
  }

  app.route({
    ...operations.dryRunIngestCsv,
    handler: async (request, reply) => {
      // A dry run describes one moment of the table: nothing for a cache to keep.
      void reply.header('cache-control', 'no-store')
      return await dryRun(request)
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
        return await reply.code(200 as never).send(await dryRun(request) as never)
      }
      const text = decodeCsv(await readCsvUpload(request, config.maxUploadBytes))
      const outcome = await app.commitAndInvalidate({
        // The file is validated as it is written: a 400 found mid-file rolls back what was written before it.
        run: async (notifyPayload) => await app.prices.ingest(cycleCsvBatches(text, undefined, acceptedCycleWindow(config.now?.())), { notifyPayload }),
        changedCycles: (outcome) => outcome.cycles.map((c) => c.validFrom),
        count: (outcome) => {
          app.metrics.ingests.inc()
          app.metrics.rowsIngested.inc(outcome.recordsProcessed)
        }
      })
      request.log.info(logFields(outcome), 'csv ingested')
      void reply.code(201)
      return {
        status: 'success' as const,
        records_processed: outcome.recordsProcessed,
        timestamp: utcTimestamp(new Date()), // UTC, to the second, with a Z (D16)
        inserted: outcome.inserted,
        updated: outcome.updated,
        unchanged: outcome.unchanged
      }
    }
  })
}

function logFields (outcome: IngestOutcome): Record<string, number | string | undefined> {
  const { recordsProcessed, inserted, updated, unchanged, cycles } = outcome
  return { recordsProcessed, inserted, updated, unchanged, newestCycle: cycles[0]?.validFrom }
}

function utcTimestamp (date: Date): string {
  return date.toISOString().slice(0, 19) + 'Z'
}

export default fp(ingest, {
  name: 'ingest-routes',
  dependencies: ['prices-repository', 'cache-invalidation', 'metrics', 'rate-limit', 'http-caching', 'errors', 'bearer-auth'],
  encapsulate: true
})
