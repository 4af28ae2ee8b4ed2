import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import type { Config } from '../../config.js'
import { IngestLockBusy, WITHDRAW_LOCK_WAIT_MS, withdrawCycle } from '../../db/cycles.js'
import { HttpError } from '../../http-server/http-error.js'
import { operations } from '../../generated/openapi.js'
import { bearerAuth } from '../../auth/bearer-auth.js'
import { cycleNotFound } from './index.js'

interface WithdrawRoutesOptions {
  config: Pick<Config, 'ingestToken'>
  /** How long a withdrawal waits for a running ingest's turn (tests shorten it). */
  lockWaitMs?: number
}

export const INVALID_WITHDRAW_TOKEN = 'Invalid authorization token for cycle withdrawal.'

export const INGEST_RUNNING = 'An upload or another withdrawal is still running. Try again later.'

/** D64: seconds a client refused for a busy ingest lock is asked to wait before trying again. */
export const INGEST_RUNNING_RETRY_AFTER_SECONDS = 60

/** D26: the longest a withdrawal waits to hear its own notification back, as an ingest does. */
const NOTIFY_WAIT_MS = 2000

/** D54: DELETE /v1/cycles/{valid_from}, the admin's undo for a cycle published by mistake. */
const withdraw: FastifyPluginAsyncTypebox<WithdrawRoutesOptions> = async (app, { config, lockWaitMs = WITHDRAW_LOCK_WAIT_MS }) => {
  // D13 token first, in preParsing after the limiter's onRequest, so a wrong token counts (D48).
  const checkToken = bearerAuth({ token: config.ingestToken, detail: INVALID_WITHDRAW_TOKEN, failures: app.failedTokens })

  app.route({
    ...operations.withdrawCycle,
    preParsing: async (request) => { await checkToken(request) },
    handler: async (request, reply) => {
      const validFrom = request.params.valid_from
      const notification = app.cacheInvalidation.expect(NOTIFY_WAIT_MS)
      let withdrawn
      try {
        withdrawn = await withdrawCycle(app.database, validFrom, notification.payload, lockWaitMs)
      } catch (err) {
        notification.cancel()
        // D64: still not our turn after an ingest's wait: say so, never a bare 500.
        if (err instanceof IngestLockBusy) throw new HttpError(503, INGEST_RUNNING, { 'retry-after': String(INGEST_RUNNING_RETRY_AFTER_SECONDS) })
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
  dependencies: ['database', 'read-cache', 'cache-invalidation', 'cache-purge', 'rate-limit', 'http-caching', 'errors', 'bearer-auth']
})
