import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../../config.js'
import type { IngestOutcome } from '../../ingest/review.js'
import { operations, type DryRunResponse } from '../../generated/openapi.js'
import { bearerAuth } from '../../auth/bearer-auth.js'
import { continueIfExpected } from '../../http-server/request-framing.js'
import { acceptUploads, readCsvUpload } from '../../ingest/multipart-upload.js'
import { plausibleCycles } from '../../domain/cycle.js'
import { cycleCsvBatches, decodeCsv, parseCycleCsv } from '../../ingest/csv.js'

interface IngestRoutesOptions {
  config: Pick<Config, 'ingestToken' | 'maxUploadBytes' | 'ingestWarnShare'>
}

const INVALID_TOKEN = 'Invalid authorization token for ingestion endpoint.'

/** D48: the most price warnings one dry run lists. */
export const MAX_WARNINGS_LISTED = 1000

/** D26: the longest an ingest waits to hear its own notification back before answering. */
const NOTIFY_WAIT_MS = 2000

/** D43: `?dry_run=true` is deprecated since 2026-11-22 (RFC 9745: a Unix time). */
const DRY_RUN_DEPRECATED = '@1795305600'

/** D43: `?dry_run=true`, the dry run's spelling before its own operation (D40): out of the
 * contract (generated clients would type its answer as the ingest's), still honoured. */
const IngestLegacyQuery = Type.Object({ dry_run: Type.Boolean({ default: false }) })

/** Spec 4.5: POST /v1/ingest/csv, and its dry run (D40). */
const ingest: FastifyPluginAsyncTypebox<IngestRoutesOptions> = async (app, { config }) => {
  // D13: checked before any byte of the body is read; INGEST_TOKEN unset means open (spec 5
  // rule 4, the app warns at start). The unread body is discarded, within bounds, so the client
  // can read the 401 (D29). D48: in preParsing, after the limiter's onRequest hook, so every
  // attempt counts against the allowance, a wrong token included (spec 8): no unlimited guessing.
  const checkToken = bearerAuth({ token: config.ingestToken, detail: INVALID_TOKEN })
  app.addHook('preParsing', async (request, reply) => {
    await checkToken(request)
    continueIfExpected(request, reply) // D48: the body is invited only now
  })
  await acceptUploads(app, config.maxUploadBytes)

  /** The file's validated rows (spec 4.5, D4–D10: every 400) and what an upload would do. */
  const dryRun = async (request: FastifyRequest): Promise<DryRunResponse> => {
    const rows = parseCycleCsv(decodeCsv(await readCsvUpload(request, config.maxUploadBytes)), plausibleCycles()) // D48
    const outcome = await app.prices.count(rows)
    const review = await app.prices.review(rows, config.ingestWarnShare)
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
          warnings_not_listed: c.warnings.length - listed.length
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
      const notification = app.cacheInvalidation.expect(NOTIFY_WAIT_MS)
      let outcome
      try {
        // Spec 4.5 / D4–D10: every 400 of the file comes from its rows as they are read, and rolls
        // back whatever was written before it (D46).
        outcome = await app.prices.ingest(cycleCsvBatches(text, undefined, plausibleCycles()), { notifyPayload: notification.payload })
      } catch (err) {
        notification.cancel()
        throw err
      }
      request.log.info(logFields(outcome), 'csv ingested')
      // Spec 4.2 rule 6: only after COMMIT, so the next read cannot refill the cache from the
      // state before this ingest; and (D26) only once the commit's notification is back, so that
      // no replica serves the replaced prices after the client has read this 201.
      app.readCache.clear()
      await notification.heard
      app.metrics.ingests.inc()
      app.metrics.rowsIngested.inc(outcome.recordsProcessed)
      void reply.code(201)
      return {
        status: 'success' as const,
        records_processed: outcome.recordsProcessed, // D15
        timestamp: utcTimestamp(new Date()), // D16
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

/** D16: UTC, whole seconds, `YYYY-MM-DDTHH:MM:SSZ`. */
function utcTimestamp (date: Date): string {
  return date.toISOString().slice(0, 19) + 'Z'
}

export default fp(ingest, {
  name: 'ingest-routes',
  dependencies: ['prices-repository', 'read-cache', 'cache-invalidation', 'metrics', 'rate-limit', 'http-caching', 'errors'],
  encapsulate: true
})
