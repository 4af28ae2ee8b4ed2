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
  /** A notification payload and a promise settled when this replica hears it back, or after `timeoutMs`. */
  expect: (timeoutMs: number) => { payload: string, heard: Promise<void>, cancel: () => void }
}

/**
 * Every replica's read cache is cleared by a PostgreSQL notification sent at a write's COMMIT (D26);
 * a (re)connect clears it too, as notifications sent meanwhile are lost.
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
