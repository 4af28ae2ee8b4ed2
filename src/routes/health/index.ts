import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { HttpError } from '../../http-server/http-error.js'
import { cycleOf, todayInKenya } from '../../domain/cycle.js'
import { operations } from '../../generated/openapi.js'

/** Health answers within 2 s even when the database hangs (D25): the ping gets 1.5 s of that. */
export const HEALTH_PING_TIMEOUT_MS = 1500

const health: FastifyPluginAsyncTypebox = async (app) => {
  // One query checks the connection and tells whether the cycle covering today is stored.
  app.route({
    ...operations.getHealth,
    handler: async () => {
      let timer: NodeJS.Timeout | undefined
      let freshness: { latest: string | null, current: boolean }
      try {
        freshness = await Promise.race([
          app.cycles.freshness(cycleOf(todayInKenya()).validFrom),
          new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${HEALTH_PING_TIMEOUT_MS} ms`)), HEALTH_PING_TIMEOUT_MS)
          })
        ])
      } catch (err) {
        throw new HttpError(500, 'Database unreachable', {}, err) // its access line names the cause
      } finally {
        clearTimeout(timer)
      }
      return { status: 'healthy' as const, latest_valid_from: freshness.latest, current_cycle_loaded: freshness.current }
    }
  })
}

export default fp(health, { name: 'health-routes', dependencies: ['cycles-repository', 'http-caching', 'metrics', 'errors'] })
