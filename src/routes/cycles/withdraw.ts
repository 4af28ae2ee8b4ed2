import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import type { Config } from '../../config.js'
import { withdrawCycle } from '../../db/cycles.js'
import { operations } from '../../generated/openapi.js'
import { bearerAuth } from '../../auth/bearer-auth.js'
import { cycleNotFound } from './index.js'

interface WithdrawRoutesOptions {
  config: Pick<Config, 'ingestToken'>
  /** How long a withdrawal waits for a running ingest's turn (tests shorten it). */
  lockWaitMs?: number
}

export const INVALID_WITHDRAW_TOKEN = 'Invalid authorization token for cycle withdrawal.'

/** DELETE /v1/cycles/{valid_from}, the admin's undo for a cycle published by mistake (D54). */
const withdraw: FastifyPluginAsyncTypebox<WithdrawRoutesOptions> = async (app, { config, lockWaitMs }) => {
  // The token is checked first, in preParsing after the limiter's onRequest, so a wrong token counts.
  const checkToken = bearerAuth({ token: config.ingestToken, detail: INVALID_WITHDRAW_TOKEN, failures: app.failedTokens })

  app.route({
    ...operations.withdrawCycle,
    preParsing: async (request) => { await checkToken(request) },
    handler: async (request) => {
      const validFrom = request.params.valid_from
      const withdrawn = await app.commitAndInvalidate({
        run: async (notifyPayload) => await withdrawCycle(app.database, validFrom, notifyPayload, lockWaitMs),
        changedCycles: (withdrawn) => withdrawn === undefined ? [] : [withdrawn.validFrom]
      })
      if (withdrawn === undefined) throw cycleNotFound(validFrom)
      request.log.info({ withdrawn }, 'cycle withdrawn')
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
