import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { townFilter } from '../../domain/town.js'
import { CSV_CONTENT_TYPE, csvDocument } from '../../export/csv.js'
import { ExportGate, type ExportLimits } from '../../export/export-gate.js'
import { ListPricesQuery, operations } from '../../generated/openapi.js'
import { prefersCsv } from '../../export/negotiation.js'
import { withoutEmptyValues } from '../../errors/empty-query-values.js'
import { finiteIntegers } from '../../errors/validation.js'
import { sendHeldOr, sendReady, type ReadyBody } from '../../http-caching/ready-body.js'
import { addVary } from '../../http-caching/vary.js'
import type { LatestSnapshot } from '../../read-cache/read-cache.js'
import { cycleNotFound } from '../cycles/index.js'

const CSV_HEADERS = { 'content-type': CSV_CONTENT_TYPE, 'content-disposition': 'attachment; filename="fuel-prices.csv"' }

interface ExportFilter {
  town?: string | undefined
  start_date?: string | undefined
  end_date?: string | undefined
  limit?: number | undefined
  offset: number
}

/** D43: the old `?format=csv`, out of the contract but still honoured. */
const ListPricesLegacyQuery = Type.Object({
  ...ListPricesQuery.properties,
  format: Type.Optional(Type.Unsafe<'json' | 'csv'>({ type: 'string', enum: ['json', 'csv'] }))
})

interface PricesRoutesOptions {
  /** D63: bounds on the CSV exports of this process. */
  exports: ExportLimits
}

const prices: FastifyPluginAsyncTypebox<PricesRoutesOptions> = async (app, options) => {
  const exportGate = new ExportGate(options.exports)

  /** Every row a page selects, in its order, a batch at a time. The first batch is read before any
   * byte is sent, so a failing database is still a JSON 500 (D27). */
  const exportCsv = async (request: FastifyRequest, reply: FastifyReply, q: ExportFilter): Promise<FastifyReply> => {
    // D63: HEAD gets the headers and runs no export; Fastify's implied HEAD would read the whole stream to discard it.
    if (request.method === 'HEAD') return await reply.headers(CSV_HEADERS).send(Readable.from([]))
    exportGate.enter(reply)
    const batches = app.prices.streamPrices({ town: townFilter(q.town), startDate: q.start_date, endDate: q.end_date, offset: q.offset, limit: q.limit })
    const first = await batches.next()
    // One batch buffered ahead of the socket, not Readable.from's sixteen: a stalled client holds little (D63).
    return await reply.headers(CSV_HEADERS).send(Readable.from(csvDocument(first, batches), { highWaterMark: 1 }) as never)
  }

  const pageNumbers = finiteIntegers('limit', 'offset')
  app.route({
    ...operations.exportPricesCsv,
    preHandler: pageNumbers,
    handler: async (request, reply) => await exportCsv(request, reply, request.query)
  })

  // D43: the export on this path has no default `limit`, so whether one was given is read from the URL.
  const limitGiven = (request: FastifyRequest): boolean => {
    const query = request.url.indexOf('?')
    return query !== -1 && withoutEmptyValues(request.url.slice(query + 1)).limit !== undefined
  }

  app.route({
    ...operations.listPrices,
    schema: { ...operations.listPrices.schema, querystring: ListPricesLegacyQuery },
    preHandler: pageNumbers,
    handler: async (request, reply) => {
      const q = request.query
      // D17: publicly cacheable, and the answer depends on Accept (the CSV export).
      addVary(reply, 'Accept')
      if (q.format === 'csv' || (q.format === undefined && prefersCsv(request.headers.accept))) {
        // D43: what GET /v1/prices.csv answers for the same query, which Content-Location names.
        const query = request.url.indexOf('?')
        void reply.header('content-location', operations.exportPricesCsv.url + (query === -1 ? '' : request.url.slice(query)))
        return await exportCsv(request, reply, { ...q, limit: limitGiven(request) ? q.limit : undefined })
      }
      const town = townFilter(q.town)
      // Keyed by the normalised query (D4 town form, defaults filled in): equivalent URLs share one entry.
      const key = `prices:${town ?? ''}:${q.start_date ?? ''}:${q.end_date ?? ''}:${q.limit}:${q.offset}`
      // D44 reads from memory: PostgreSQL's JSON text, kept as ready bytes until the next ingest.
      const body = await app.readCache.body(key, async () =>
        await app.prices.listPrices({ town, startDate: q.start_date, endDate: q.end_date, offset: q.offset, limit: q.limit }))
      return sendReady(request, reply, body)
    }
  })

  // D41: each town's prices beside the cycle before, for the latest cycle or the one given.
  app.route({
    ...operations.listPriceChanges,
    handler: (request, reply) => {
      const { valid_from: validFrom } = request.query
      const town = townFilter(request.query.town)
      const key = `changes:${validFrom ?? ''}:${town ?? ''}`
      return sendHeldOr(app.readCache.heldBody(key),
        async () => await app.readCache.body(key, async () =>
          await app.cycles.changes(validFrom, town) ?? Promise.reject(cycleNotFound(validFrom as string))),
        (body) => sendReady(request, reply, body))
    }
  })

  // Spec 4.2 rule 6: ready bytes from memory after the first read.
  app.route({
    ...operations.getLatestPrices,
    handler: (request, reply) => {
      const town = townFilter(request.query.town)
      const pick = (snapshot: LatestSnapshot): ReadyBody => town === undefined ? snapshot.all : snapshot.forTown(town)
      return sendHeldOr(app.readCache.heldLatest(), async () => await app.readCache.latest(),
        (snapshot) => sendReady(request, reply, pick(snapshot)))
    }
  })
}

export default fp(prices, {
  name: 'prices-routes',
  dependencies: ['prices-repository', 'cycles-repository', 'read-cache', 'rate-limit', 'http-caching', 'metrics', 'errors']
})
