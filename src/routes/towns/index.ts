import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ListTownsQuery, ListTownsResponses } from '../../generated/openapi.js'

const towns: FastifyPluginAsyncTypebox = async (app) => {
  // operationId: listTowns — D3 order, read from the database at request time (spec 4.3 r2).
  app.get('/v1/towns', {
    schema: { querystring: ListTownsQuery, response: ListTownsResponses },
    config: { publicCache: true }
  }, async () => await app.prices.listTowns())
}

export default towns
