import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Registry } from 'prom-client'
import { bearerAuth } from '../../auth/bearer-auth.js'
import { defaultMetricsRegistry } from '../../metrics/index.js'

interface MetricsRoutesOptions {
  /** METRICS_TOKEN: when set, `/metrics` wants `Authorization: Bearer <token>`. */
  token?: string | undefined
}

export const METRICS_PATH = '/metrics'

const INVALID_METRICS_TOKEN = 'Invalid authorization token for metrics endpoint.'

/** Not in the contract: no-store, as every route without a cache policy. */
async function metricsRoutes (app: FastifyInstance, options: MetricsRoutesOptions): Promise<void> {
  app.get(METRICS_PATH, {
    onRequest: bearerAuth({ token: options.token, detail: INVALID_METRICS_TOKEN, failures: app.failedTokens })
  }, async (_request, reply) => {
    const merged = Registry.merge([defaultMetricsRegistry(), app.metrics.registry])
    return await reply.type(merged.contentType).send(await merged.metrics())
  })
}

export default fp(metricsRoutes, { name: 'metrics-routes', dependencies: ['metrics', 'http-caching', 'errors', 'bearer-auth'] })
