import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { pricesChangedChannel } from '../db/channels.js'

declare module 'fastify' {
  interface FastifyInstance {
    cacheInvalidation: CacheInvalidation
  }
}

interface CacheInvalidation {
  /**
   * A payload for an ingest's notification and a promise that settles when this replica hears
   * it back (at most `timeoutMs` later): PostgreSQL delivers one commit's notification to every
   * listener at once, so an ingest that answers after hearing its own leaves the other replicas
   * no window in which to serve what it replaced. Immediate where there is nothing to hear.
   */
  expect: (timeoutMs: number) => { payload: string, heard: Promise<void>, cancel: () => void }
}

/**
 * D26: every replica clears its read cache (the latest cycle and every other cached answer) when
 * any replica commits an ingest. On PostgreSQL a dedicated LISTEN connection receives the
 * notification; when that connection is (re)established the cache is cleared as well, since
 * notifications sent while it was down are lost. On PGlite there is one process, and the ingest
 * clears the cache itself.
 */
async function cacheInvalidation (app: FastifyInstance): Promise<void> {
  const sql = app.database.sql
  if (sql === undefined) {
    app.decorate('cacheInvalidation', { expect: () => ({ payload: '', heard: Promise.resolve(), cancel: () => {} }) })
    return
  }
  const channel = pricesChangedChannel(app.database)
  const waiting = new Map<string, () => void>()
  let connections = 0
  const subscription = await sql.listen(channel, (payload) => {
    app.readCache.clear()
    waiting.get(payload)?.()
    app.log.debug({ channel }, 'read cache cleared by a notification')
  }, () => {
    connections++
    app.readCache.clear()
    if (connections > 1) app.log.info({ channel }, 'notification listener reconnected; read cache cleared')
  })
  app.addHook('onClose', async () => { await subscription.unlisten().catch(() => {}) })
  app.decorate('cacheInvalidation', {
    expect: (timeoutMs: number) => {
      const payload = randomUUID()
      let done = (): void => {}
      const heard = new Promise<void>((resolve) => {
        const timer = setTimeout(() => done(), timeoutMs)
        done = () => {
          clearTimeout(timer)
          waiting.delete(payload)
          resolve()
        }
        waiting.set(payload, done)
      })
      return { payload, heard, cancel: done }
    }
  })
}

export default fp(cacheInvalidation, { name: 'cache-invalidation', dependencies: ['database', 'read-cache'] })
