import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { listenForPriceChanges, pricesChangedChannel } from '../db/channels.js'
import { IngestLockBusy } from '../db/locks.js'
import { HttpError } from '../http-server/http-error.js'
import { settlesWithin } from '../settles-within.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Every write route goes through it: it answers only once no reader can see the old data. */
    commitAndInvalidate: <T>(write: ReaderVisibleWrite<T>) => Promise<T>
  }
}

/** The longest a write waits, after its commit, to hear its own notification back and for the
 * reload of the latest prices before it answers. */
export const NOTIFY_WAIT_MS = 2000

export const INGEST_RUNNING = 'An upload or another withdrawal is still running. Try again later.'

/** Seconds a client refused for a busy ingest lock is asked to wait before trying again. */
const INGEST_RUNNING_RETRY_AFTER_SECONDS = 60

interface ReaderVisibleWrite<T> {
  /** One transaction that, when it changes anything, sends the prices-changed notification before it commits. */
  run: (notifyPayload: string) => Promise<T>
  /** The cycles (valid_from) whose answers the committed write changed; none: it wrote nothing and notified nothing. */
  changedCycles: (result: T) => readonly string[]
  /** Counts the write in the metrics, once every reader sees it. */
  count?: (result: T) => void
}

interface Notification {
  payload: string
  /** Settles when this replica hears the payload back, or after `NOTIFY_WAIT_MS`. */
  heard: Promise<void>
  cancel: () => void
}

/** A (re)connect clears the read cache too, as notifications sent meanwhile are lost (D26);
 * on PGlite one process holds the database, so the writer's own refresh is enough. */
async function cacheInvalidation (app: FastifyInstance): Promise<void> {
  const waiting = new Map<string, () => void>()
  const channel = pricesChangedChannel(app.database)
  let connections = 0
  const stopListening = await listenForPriceChanges(app.database, (payload) => {
    const ownWrite = waiting.get(payload)
    if (ownWrite !== undefined) {
      ownWrite() // this replica refreshed its cache after its own commit
      return
    }
    app.readCache.clear()
    app.log.debug({ channel }, 'read cache cleared by a notification')
  }, () => {
    connections++
    app.readCache.clear()
    if (connections > 1) app.log.info({ channel }, 'notification listener reconnected; read cache cleared')
  })
  if (stopListening !== undefined) app.addHook('onClose', async () => { await stopListening().catch(() => {}) })

  const expectNotification = (): Notification => {
    const payload = randomUUID()
    if (stopListening === undefined) return { payload, heard: Promise.resolve(), cancel: () => {} }
    let done = (): void => {}
    const heard = new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), NOTIFY_WAIT_MS)
      done = () => {
        clearTimeout(timer)
        waiting.delete(payload)
        resolve()
      }
      waiting.set(payload, done)
    })
    return { payload, heard, cancel: done }
  }

  app.decorate('commitAndInvalidate', async <T>(write: ReaderVisibleWrite<T>): Promise<T> => {
    const notification = expectNotification()
    let result: T
    try {
      result = await write.run(notification.payload)
    } catch (err) {
      notification.cancel()
      // Still not its turn after the wait: say so, never a bare 500.
      if (err instanceof IngestLockBusy) throw new HttpError(503, INGEST_RUNNING, { 'retry-after': String(INGEST_RUNNING_RETRY_AFTER_SECONDS) })
      throw err
    }
    const cycles = write.changedCycles(result)
    if (cycles.length === 0) {
      notification.cancel()
      return result
    }
    // Refreshed after COMMIT and answered once every replica heard (spec 4.2 rule 6), so after this
    // answer no replica serves the old data; then the shared cache drops its copies (D70). Until
    // the refresh lands, readers overlapping the write are served the answer from before it.
    const [refreshed] = await Promise.all([settlesWithin(app.readCache.refreshLatest(), NOTIFY_WAIT_MS), notification.heard])
    // A reload held up by a stalled database must not delay the answer, nor leave the old answer
    // serving after it: the cache is emptied and the next readers load for themselves.
    if (!refreshed) app.readCache.clear()
    await app.cachePurge.changed(cycles)
    write.count?.(result)
    return result
  })
}

export default fp(cacheInvalidation, { name: 'cache-invalidation', dependencies: ['database', 'read-cache', 'cache-purge'] })
