import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { HttpError } from '../../domain/errors.js'
import { GetHealthQuery, GetHealthResponses } from '../../generated/openapi.js'

/** D25: answer within 2 s even when the database hangs; the ping gets 1.5 s of that. */
export const HEALTH_PING_TIMEOUT_MS = 1500

const health: FastifyPluginAsyncTypebox = async (app) => {
  // operationId: getHealth — exempt from rate limiting (spec 8), never cached (D17).
  app.get('/v1/health', {
    schema: { querystring: GetHealthQuery, response: GetHealthResponses },
    config: { rateLimit: false }
  }, async (request) => {
    let timer: NodeJS.Timeout | undefined
    try {
      await Promise.race([
        app.prices.ping(),
        new Promise((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${HEALTH_PING_TIMEOUT_MS} ms`)), HEALTH_PING_TIMEOUT_MS)
        })
      ])
    } catch (err) {
      request.log.warn({ err }, 'health check: database unreachable')
      throw new HttpError(500, 'Database unreachable')
    } finally {
      clearTimeout(timer)
    }
    return { status: 'healthy' as const }
  })
}

export default health
