import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Graceful shutdown: a request still in flight when closing starts (an ingest, say) is finished,
 * and its keep-alive connection closed with it, so the server can close at once.
 */
async function gracefulClose (app: FastifyInstance): Promise<void> {
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close')
    done(null, payload)
  })
}

export default fp(gracefulClose, { name: 'graceful-close' })
