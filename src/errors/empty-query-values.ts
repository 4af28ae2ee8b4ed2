import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** D21 query leniency: an empty value means the parameter is absent, so its default applies. */
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
