import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { townFilter } from '../../domain/town.js'
import { CSV_CONTENT_TYPE, CSV_HEADER, CSV_LINE_END, csvLines } from '../../export/csv.js'
import { GetLatestPricesQuery, GetLatestPricesResponses, ListPricesQuery, ListPricesResponses, type FuelPrice } from '../../generated/openapi.js'
import { prefersCsv } from '../../http/accept.js'
import { pickRepresentation } from '../../http/body.js'

export const CSV_CONTENT_DISPOSITION = 'attachment; filename="fuel-prices.csv"'

const prices: FastifyPluginAsyncTypebox = async (app) => {
  // operationId: listPrices
  app.get('/v1/prices', {
    schema: { querystring: ListPricesQuery, response: ListPricesResponses },
    config: { publicCache: true }
  }, async (request, reply) => {
    const q = request.query
    // The answer depends on Accept (CSV export), and it is publicly cacheable (D17).
    addVary(reply, 'Accept')
    const filter = { town: townFilter(q.town), startDate: q.start_date, endDate: q.end_date }
    if (q.format === 'csv' || (q.format === undefined && prefersCsv(request.headers.accept))) {
      // Bulk download: without `limit`, every matching row, read and written a batch at a time.
      // The contract's default (100) is for pages; it is filled in by validation, so whether the
      // client gave a limit is read from the query string itself (D21: an empty value is absent).
      const limit = hasQueryValue(request.url, 'limit') ? q.limit : undefined
      const batches = app.prices.streamPrices({ ...filter, limit, offset: q.offset ?? 0 })
      // The first batch is read before any byte is sent, so a failing database is still a
      // JSON 500 (D27); a failure after that can only cut the transfer short.
      const first = await batches.next()
      void reply.header('content-type', CSV_CONTENT_TYPE).header('content-disposition', CSV_CONTENT_DISPOSITION)
      return await reply.send(Readable.from(csvChunks(first, batches)) as never)
    }
    const body = await app.prices.listPrices({ ...filter, limit: q.limit ?? 100, offset: q.offset ?? 0 })
    // JSON text made by PostgreSQL: sent as it is (a string with a JSON type is not serialised).
    return await reply.header('content-type', 'application/json; charset=utf-8').send(body as never)
  })

  // operationId: getLatestPrices — spec 4.2 rule 6: ready bytes from memory after the first read.
  app.get('/v1/prices/latest', {
    schema: { querystring: GetLatestPricesQuery, response: GetLatestPricesResponses },
    config: { publicCache: true }
  }, async (request, reply) => {
    const snapshot = await app.latestCache.get()
    const town = townFilter(request.query.town)
    const body = town === undefined ? snapshot.all : (snapshot.byTown.get(town.toLowerCase()) ?? snapshot.none)
    void reply.header('content-type', 'application/json; charset=utf-8')
    const { bytes, etag, encoding } = pickRepresentation(body, request.headers['accept-encoding'])
    void reply.header('etag', etag)
    // Added to, not replacing, the Vary: Origin that CORS set (a CDN must key on both).
    if (body.gzip !== undefined) addVary(reply, 'Accept-Encoding')
    if (encoding !== 'identity') void reply.header('content-encoding', encoding)
    // Ready bytes: a Buffer bypasses the serializer (the schema still documents the shape).
    return await reply.send(bytes as never)
  })
}

/** The header line, then the batches as CSV lines; pulled by the response as it drains. */
async function * csvChunks (
  first: IteratorResult<FuelPrice[], void>,
  rest: AsyncGenerator<FuelPrice[], void, undefined>
): AsyncGenerator<string, void, undefined> {
  yield CSV_HEADER + CSV_LINE_END
  if (first.done === true) return
  yield csvLines(first.value)
  for await (const rows of rest) yield csvLines(rows)
}

/** Whether the raw query string gives `name` a non-empty value. */
function hasQueryValue (url: string, name: string): boolean {
  const query = url.indexOf('?')
  if (query === -1) return false
  const value = new URLSearchParams(url.slice(query + 1)).get(name)
  return value !== null && value !== ''
}

/** Adds a field to Vary, keeping what is there (CORS has already put `Origin` in it). */
function addVary (reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary')
  const fields = (Array.isArray(current) ? current.join(',') : String(current ?? '')).split(',').map((f) => f.trim()).filter((f) => f !== '')
  if (fields.some((f) => f === '*' || f.toLowerCase() === field.toLowerCase())) return
  void reply.header('vary', [...fields, field].join(', '))
}

export default prices
