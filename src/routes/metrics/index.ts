import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Registry } from 'prom-client'
import { bearerAuth } from '../../auth/bearer-auth.js'
import { defaultMetricsRegistry } from '../../metrics/index.js'

interface MetricsRoutesOptions {
  /** METRICS_TOKEN: when set, `/metrics` wants `Authorization: Bearer <token>`. */
  token?: string | undefined
}

const INVALID_METRICS_TOKEN = 'Invalid authorization token for metrics endpoint.'

/** Not in the contract; no-store is the app default. */
async function metricsRoutes (app: FastifyInstance, options: MetricsRoutesOptions): Promise<void> {
  app.get('/metrics', {
    config: { rateLimit: false },
    onRequest: bearerAuth({ token: options.token, detail: INVALID_METRICS_TOKEN, failures: app.failedTokens })
  }, async (_request, reply) => {
    const merged = Registry.merge([defaultMetricsRegistry(), app.metrics.registry])
    return await reply.type(merged.contentType).send(await merged.metrics())
  })
}

export default fp(metricsRoutes, { name: 'metrics-routes', dependencies: ['metrics', 'http-caching', 'errors', 'bearer-auth'] })
