import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * D21: an empty query value (`?town=`, `?limit=`) means the parameter is absent, so its default
 * applies. Removed before validation; callback-style, so no promise per request on the hot path.
 */
async function emptyQueryValues (app: FastifyInstance): Promise<void> {
  app.addHook('preValidation', (request, _reply, done) => {
    const query = request.query as Record<string, unknown> | undefined
    if (query !== undefined && query !== null) {
      for (const key in query) if (query[key] === '') delete query[key]
    }
    done()
  })
}

export default fp(emptyQueryValues, { name: 'empty-query-values' })
