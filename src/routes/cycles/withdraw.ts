import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import type { Config } from '../../config.js'
import { withdrawCycle } from '../../db/cycles.js'
import { operations } from '../../generated/openapi.js'
import { bearerAuth } from '../../auth/bearer-auth.js'
import { cycleNotFound } from './index.js'

interface WithdrawRoutesOptions {
  config: Pick<Config, 'ingestToken'>
}

export const INVALID_WITHDRAW_TOKEN = 'Invalid authorization token for cycle withdrawal.'

/** D26: the longest a withdrawal waits to hear its own notification back, as an ingest does. */
const NOTIFY_WAIT_MS = 2000

/** D54: DELETE /v1/cycles/{valid_from}, the admin's undo for a cycle published by mistake. */
const withdraw: FastifyPluginAsyncTypebox<WithdrawRoutesOptions> = async (app, { config }) => {
  // D13 token first, in preParsing after the limiter's onRequest, so a wrong token counts (D48).
  const checkToken = bearerAuth({ token: config.ingestToken, detail: INVALID_WITHDRAW_TOKEN })

  app.route({
    ...operations.withdrawCycle,
    preParsing: async (request) => { await checkToken(request) },
    handler: async (request, reply) => {
      const validFrom = request.params.valid_from
      const notification = app.cacheInvalidation.expect(NOTIFY_WAIT_MS)
      let withdrawn
      try {
        withdrawn = await withdrawCycle(app.database, validFrom, notification.payload)
      } catch (err) {
        notification.cancel()
        throw err
      }
      if (withdrawn === undefined) {
        notification.cancel()
        throw cycleNotFound(validFrom)
      }
      request.log.info({ withdrawn }, 'cycle withdrawn')
      // Spec 4.2 rule 6, D26 cache invalidation: cleared after COMMIT, answered once every replica
      // heard, so none serves the withdrawn cycle after the client reads this 200.
      app.readCache.clear()
      await notification.heard
      await app.cachePurge.changed([withdrawn.validFrom])
      void reply.header('cache-control', 'no-store')
      return {
        status: 'withdrawn' as const,
        valid_from: withdrawn.validFrom,
        valid_to: withdrawn.validTo,
        rows_removed: withdrawn.rowsRemoved
      }
    }
  })
}

export default fp(withdraw, {
  name: 'cycle-withdrawal-routes',
  dependencies: ['database', 'read-cache', 'cache-invalidation', 'cache-purge', 'rate-limit', 'http-caching', 'errors']
})
