import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import type { Config } from '../../config.js'
import { HttpError } from '../../domain/errors.js'
import { ATOM_CONTENT_TYPE, atomFeed } from '../../export/atom.js'
import { operations } from '../../generated/openapi.js'
import { sendReady } from '../../http-caching/ready-body.js'
import { finiteIntegers } from '../../errors/validation.js'
import { requestOrigin } from '../../http-server/request-origin.js'
import { addVary } from '../../http-caching/vary.js'

/** D41: the feed holds the newest two years of cycles. */
const FEED_ENTRIES = 24

/** D41 cycles: 404 for a day on which no stored cycle starts. */
export const cycleNotFound = (validFrom: string): HttpError => new HttpError(404, `No cycle starts on ${validFrom}.`)

interface CyclesRoutesOptions {
  config: Pick<Config, 'publicUrl' | 'trustProxy'>
}

/** D41 cycles: statistics per cycle, one cycle, and an Atom feed; all from the read cache. */
const cycles: FastifyPluginAsyncTypebox<CyclesRoutesOptions> = async (app, { config }) => {
  app.route({
    ...operations.listCycles,
    preHandler: finiteIntegers('limit', 'offset'),
    handler: async (request, reply) => {
      const { limit, offset } = request.query
      const key = `cycles:${limit}:${offset}`
      const body = await app.readCache.body(key, async () => await app.cycles.listCycles(limit, offset))
      return await sendReady(request, reply, body)
    }
  })

  app.route({
    ...operations.getCyclesFeed,
    handler: async (request, reply) => {
      // D52: `self` is PUBLIC_URL's, or else the request's, so the body is kept per origin.
      const origin = config.publicUrl ?? requestOrigin(request)
      const key = `cycles:feed:${origin}`
      const body = await app.readCache.body(key, async () => atomFeed(await app.cycles.recentCycles(FEED_ENTRIES), origin))
      if (config.publicUrl === undefined && config.trustProxy !== false) {
        addVary(reply, 'X-Forwarded-Proto')
        addVary(reply, 'X-Forwarded-Host')
      }
      return await sendReady(request, reply, body, ATOM_CONTENT_TYPE)
    }
  })

  app.route({
    ...operations.getCycle,
    handler: async (request, reply) => {
      const validFrom = request.params.valid_from
      // A miss for an unknown day throws, so nothing is kept for it.
      const key = `cycle:${validFrom}`
      const body = await app.readCache.body(key, async () => await app.cycles.getCycle(validFrom) ?? Promise.reject(cycleNotFound(validFrom)))
      return await sendReady(request, reply, body)
    }
  })
}

export default fp(cycles, {
  name: 'cycles-routes',
  dependencies: ['cycles-repository', 'read-cache', 'rate-limit', 'http-caching', 'metrics', 'errors']
})
