import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { bodyIdleTimeoutHook } from './timeouts.js'

/** D32 connection timeouts: a request body that stalls for idleMs ends its connection. */
async function bodyIdleTimeout (app: FastifyInstance, options: { idleMs: number }): Promise<void> {
  app.addHook('onRequest', bodyIdleTimeoutHook(options.idleMs))
}

export default fp(bodyIdleTimeout, { name: 'body-idle-timeout' })
