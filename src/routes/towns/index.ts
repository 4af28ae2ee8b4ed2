import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { operations } from '../../generated/openapi.js'
import { sendCached } from '../../http-caching/cached-body.js'

const towns: FastifyPluginAsyncTypebox = async (app) => {
  // Only writes change the list, and they clear the cache, so a cached list is always current.
  app.route({
    ...operations.listTowns,
    handler: async (request, reply) => await sendCached(request, reply, app.readCache.body('towns', async () =>
      JSON.stringify(await app.prices.listTowns())))
  })
}

export default fp(towns, {
  name: 'towns-routes',
  dependencies: ['prices-repository', 'read-cache', 'rate-limit', 'http-caching', 'metrics', 'errors']
})
