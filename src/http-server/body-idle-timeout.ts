import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { bodyIdleTimeoutHook } from './timeouts.js'

/** D32: a request body that stops arriving for BODY_IDLE_TIMEOUT_MS ends its connection. */
async function bodyIdleTimeout (app: FastifyInstance, options: { idleMs: number }): Promise<void> {
  app.addHook('onRequest', bodyIdleTimeoutHook(options.idleMs))
}

export default fp(bodyIdleTimeout, { name: 'body-idle-timeout' })
