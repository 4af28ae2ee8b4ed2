import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { townFilter } from '../../domain/town.js'
import { CSV_CONTENT_TYPE, csvDocument } from '../../export/csv.js'
import { ExportGate, type ExportLimits } from '../../export/export-gate.js'
import { ListPricesQuery, operations, type ExportPricesCsvQuery } from '../../generated/openapi.js'
import { prefersCsv } from '../../export/negotiation.js'
import { parseQueryString } from '../../http-server/query-string.js'
import { finiteIntegers } from '../../errors/validation.js'
import { sendCached } from '../../http-caching/cached-body.js'
import { addVary } from '../../http-caching/vary.js'
import { cycleNotFound } from '../cycles/index.js'

/** The page is JSON or CSV by `Accept`, so both forms say so. */
const VARIES_WITH_ACCEPT = { vary: ['Accept'] }

const CSV_HEADERS = { 'content-type': CSV_CONTENT_TYPE, 'content-disposition': 'attachment; filename="fuel-prices.csv"' }

/** The old `?format=csv`, out of the contract but still honoured (D43). */
const ListPricesLegacyQuery = Type.Object({
  ...ListPricesQuery.properties,
  format: Type.Optional(Type.Unsafe<'json' | 'csv'>({ type: 'string', enum: ['json', 'csv'] }))
})

interface PricesRoutesOptions {
  exports: ExportLimits
}

const prices: FastifyPluginAsyncTypebox<PricesRoutesOptions> = async (app, options) => {
  const exportGate = new ExportGate(options.exports)

  /** The first batch is read before any byte is sent, so a failing database is still a JSON 500 (D27). */
  const exportCsv = async (request: FastifyRequest, reply: FastifyReply, q: ExportPricesCsvQuery): Promise<FastifyReply> => {
    // HEAD gets the headers and runs no export: Fastify's implied HEAD would read the whole stream to discard it (D63).
    if (request.method === 'HEAD') return await reply.headers(CSV_HEADERS).send(Readable.from([]))
    exportGate.enter(reply)
    const batches = app.prices.streamPrices({ town: townFilter(q.town), startDate: q.start_date, endDate: q.end_date, offset: q.offset, limit: q.limit })
    const first = await batches.next()
    // One batch buffered ahead of the socket, not Readable.from's sixteen: a stalled client holds little.
    return await reply.headers(CSV_HEADERS).send(Readable.from(csvDocument(first, batches), { highWaterMark: 1 }) as never)
  }

  const pageNumbers = finiteIntegers('limit', 'offset')
  app.route({
    ...operations.exportPricesCsv,
    preHandler: pageNumbers,
    handler: async (request, reply) => await exportCsv(request, reply, request.query)
  })

  // The export on this path has no default `limit`, so whether one was given is read from the URL (D43).
  const limitGiven = (request: FastifyRequest): boolean => {
    const query = request.url.indexOf('?')
    return query !== -1 && parseQueryString(request.url.slice(query + 1)).limit !== undefined
  }

  app.route({
    ...operations.listPrices,
    schema: { ...operations.listPrices.schema, querystring: ListPricesLegacyQuery },
    preHandler: pageNumbers,
    handler: async (request, reply) => {
      const q = request.query
      if (q.format === 'csv' || (q.format === undefined && prefersCsv(request.headers.accept))) {
        addVary(reply, 'Accept')
        // Content-Location names the export that answers the same query.
        const query = request.url.indexOf('?')
        void reply.header('content-location', operations.exportPricesCsv.url + (query === -1 ? '' : request.url.slice(query)))
        return await exportCsv(request, reply, { ...q, limit: limitGiven(request) ? q.limit : undefined })
      }
      const town = townFilter(q.town)
      // Keyed by the normalised query (canonical town, defaults filled in): equivalent URLs share one body.
      const key = `prices:${town ?? ''}:${q.start_date ?? ''}:${q.end_date ?? ''}:${q.limit}:${q.offset}`
      return await sendCached(request, reply, app.readCache.body(key, async () =>
        await app.prices.listPrices({ town, startDate: q.start_date, endDate: q.end_date, offset: q.offset, limit: q.limit })), VARIES_WITH_ACCEPT)
    }
  })

  // Each town's prices beside the cycle before, for the latest cycle or the one given.
  app.route({
    ...operations.listPriceChanges,
    handler: async (request, reply) => {
      const { valid_from: validFrom } = request.query
      const town = townFilter(request.query.town)
      return await sendCached(request, reply, app.readCache.body(`changes:${validFrom ?? ''}:${town ?? ''}`, async () =>
        await app.cycles.changes(validFrom, town) ?? Promise.reject(cycleNotFound(validFrom as string))))
    }
  })

  app.route({
    ...operations.getLatestPrices,
    handler: async (request, reply) => await sendCached(request, reply, app.readCache.latest(townFilter(request.query.town)))
  })
}

export default fp(prices, {
  name: 'prices-routes',
  dependencies: ['prices-repository', 'cycles-repository', 'read-cache', 'rate-limit', 'http-caching', 'metrics', 'errors']
})
