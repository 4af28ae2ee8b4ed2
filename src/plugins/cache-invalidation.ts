import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { pricesChangedChannel } from '../db/channels.js'

/**
 * D26: every replica clears its latest-prices cache when any replica commits an ingest. On
 * PostgreSQL a dedicated LISTEN connection receives the notification; when that connection is
 * (re)established the cache is cleared as well, since notifications sent while it was down are
 * lost. On PGlite there is one process, and the ingest clears the cache itself.
 */
async function cacheInvalidation (app: FastifyInstance): Promise<void> {
  const sql = app.database.sql
  if (sql === undefined) return
  const channel = pricesChangedChannel(app.database)
  let connections = 0
  const subscription = await sql.listen(channel, () => {
    app.latestCache.clear()
    app.log.debug({ channel }, 'latest-prices cache cleared by a notification')
  }, () => {
    connections++
    app.latestCache.clear()
    if (connections > 1) app.log.info({ channel }, 'notification listener reconnected; latest-prices cache cleared')
  })
  app.addHook('onClose', async () => { await subscription.unlisten().catch(() => {}) })
}

export default fp(cacheInvalidation, { name: 'cache-invalidation', dependencies: ['database'] })
