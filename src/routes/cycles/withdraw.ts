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

/** Seconds a client refused for a busy ingest lock is asked to wait before trying again. */
const INGEST_RUNNING_RETRY_AFTER_SECONDS = 60

/** DELETE /v1/cycles/{valid_from}, the admin's undo for a cycle published by mistake (D54). */
const withdraw: FastifyPluginAsyncTypebox<WithdrawRoutesOptions> = async (app, { config, lockWaitMs = WITHDRAW_LOCK_WAIT_MS }) => {
  // The token is checked first, in preParsing after the limiter's onRequest, so a wrong token counts.
  const checkToken = bearerAuth({ token: config.ingestToken, detail: INVALID_WITHDRAW_TOKEN, failures: app.failedTokens })

  app.route({
    ...operations.withdrawCycle,
    preParsing: async (request) => { await checkToken(request) },
    handler: async (request, reply) => {
      const validFrom = request.params.valid_from
      let withdrawn
      try {
        withdrawn = await app.commitAndInvalidate({
          run: async (notifyPayload) => await withdrawCycle(app.database, validFrom, notifyPayload, lockWaitMs),
          changedCycles: (withdrawn) => withdrawn === undefined ? [] : [withdrawn.validFrom]
        })
      } catch (err) {
        // Still not its turn after an ingest's wait: say so, never a bare 500.
        if (err instanceof IngestLockBusy) throw new HttpError(503, INGEST_RUNNING, { 'retry-after': String(INGEST_RUNNING_RETRY_AFTER_SECONDS) })
        throw err
      }
      if (withdrawn === undefined) throw cycleNotFound(validFrom)
      request.log.info({ withdrawn }, 'cycle withdrawn')
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
  dependencies: ['database', 'cache-invalidation', 'rate-limit', 'http-caching', 'errors', 'bearer-auth']
})
