import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { FailedTokenBudget } from './failed-tokens.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The one allowance of wrong bearer tokens that every protected route spends. */
    failedTokens: FailedTokenBudget
  }
}

interface BearerAuthPluginOptions {
  failuresPerMinute: number
}

async function bearerAuthPlugin (app: FastifyInstance, options: BearerAuthPluginOptions): Promise<void> {
  app.decorate('failedTokens', new FailedTokenBudget({ perMinute: options.failuresPerMinute, log: app.log }))
}

export default fp(bearerAuthPlugin, { name: 'bearer-auth' })
