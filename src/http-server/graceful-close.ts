import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** Shutdown: an answer in flight closes its keep-alive connection so close() need not wait. */
async function gracefulClose (app: FastifyInstance): Promise<void> {
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close')
    done(null, payload)
  })
}

export default fp(gracefulClose, { name: 'graceful-close' })
