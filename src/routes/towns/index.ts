import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { operations } from '../../generated/openapi.js'
import { sendHeldOr, sendReady } from '../../http-caching/ready-body.js'

const towns: FastifyPluginAsyncTypebox = async (app) => {
  // D3 order. Spec 4.3 rule 2 holds from the cache: only ingests change it, and they clear it (D26).
  app.route({
    ...operations.listTowns,
    handler: (request, reply) => sendHeldOr(app.readCache.heldBody('towns'),
      async () => await app.readCache.body('towns', async () => JSON.stringify(await app.prices.listTowns())),
      (body) => sendReady(request, reply, body))
  })
}

export default fp(towns, {
  name: 'towns-routes',
  dependencies: ['prices-repository', 'read-cache', 'rate-limit', 'http-caching', 'metrics', 'errors']
})
