import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import type { Config } from '../../config.js'
import { HttpError } from '../../http-server/http-error.js'
import { ATOM_CONTENT_TYPE, atomFeed } from '../../export/atom.js'
import { operations } from '../../generated/openapi.js'
import { sendCached } from '../../http-caching/cached-body.js'
import { finiteIntegers } from '../../errors/validation.js'
import { requestOrigin } from '../../http-server/request-origin.js'

/** The feed holds the newest two years of cycles. */
const FEED_ENTRIES = 24

export const cycleNotFound = (validFrom: string): HttpError => new HttpError(404, `No cycle starts on ${validFrom}.`)

interface CyclesRoutesOptions {
  config: Pick<Config, 'publicUrl' | 'trustProxy'>
}

/** Statistics per cycle, one cycle, and an Atom feed of them; all from the read cache. */
const cycles: FastifyPluginAsyncTypebox<CyclesRoutesOptions> = async (app, { config }) => {
  // Behind a trusted proxy without PUBLIC_URL, the feed's self link follows the forwarded origin.
  const feedVary = config.publicUrl === undefined && config.trustProxy !== false ? ['X-Forwarded-Proto', 'X-Forwarded-Host'] : []

  app.route({
    ...operations.listCycles,
    preHandler: finiteIntegers('limit', 'offset'),
    handler: async (request, reply) => {
      const { limit, offset } = request.query
      return await sendCached(request, reply, app.readCache.body(`cycles:${limit}:${offset}`, async () =>
        await app.cycles.listCycles(limit, offset)))
    }
  })

  app.route({
    ...operations.getCyclesFeed,
    handler: async (request, reply) => {
      // The self link is absolute, PUBLIC_URL's or else the request's origin, so the feed is kept per origin (D52).
      const origin = config.publicUrl ?? requestOrigin(request)
      return await sendCached(request, reply, app.readCache.body(`cycles:feed:${origin}`, async () =>
        atomFeed(await app.cycles.recentCycles(FEED_ENTRIES), origin)), { contentType: ATOM_CONTENT_TYPE, vary: feedVary })
    }
  })

  app.route({
    ...operations.getCycle,
    handler: async (request, reply) => {
      const validFrom = request.params.valid_from
      // An unknown day rejects the load, so nothing is kept for it.
      return await sendCached(request, reply, app.readCache.body(`cycle:${validFrom}`, async () =>
        await app.cycles.getCycle(validFrom) ?? Promise.reject(cycleNotFound(validFrom))))
    }
  })
}

export default fp(cycles, {
  name: 'cycles-routes',
  dependencies: ['cycles-repository', 'read-cache', 'rate-limit', 'http-caching', 'metrics', 'errors']
})
