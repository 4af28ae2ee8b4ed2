import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { townFilter } from '../../domain/town.js'
import { GetLatestPricesQuery, GetLatestPricesResponses, ListPricesQuery, ListPricesResponses } from '../../generated/openapi.js'
import { pickRepresentation } from '../../http/body.js'

const prices: FastifyPluginAsyncTypebox = async (app) => {
  // operationId: listPrices
  app.get('/v1/prices', {
    schema: { querystring: ListPricesQuery, response: ListPricesResponses },
    config: { publicCache: true }
  }, async (request) => {
    const q = request.query
    return await app.prices.listPrices({
      town: townFilter(q.town),
      startDate: q.start_date,
      endDate: q.end_date,
      limit: q.limit ?? 100,
      offset: q.offset ?? 0
    })
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
    if (body.gzip !== undefined) void reply.header('vary', 'Accept-Encoding')
    if (encoding !== 'identity') void reply.header('content-encoding', encoding)
    // Ready bytes: a Buffer bypasses the serializer (the schema still documents the shape).
    return await reply.send(bytes as never)
  })
}

export default prices
