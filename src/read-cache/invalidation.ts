import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { confirmPricesChanged, countListeners, listenForPriceChanges, pricesChangedChannel } from '../db/channels.js'
import { IngestLockBusy } from '../db/locks.js'
import { HttpError } from '../http-server/http-error.js'
import { settlesWithin } from '../settles-within.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Every write route goes through it: it answers only once no reader can see the old data. */
    commitAndInvalidate: <T>(write: ReaderVisibleWrite<T>) => Promise<T>
  }
}

/** The longest a write waits, after its commit, for every replica to confirm its notification and
 * for the reload of the latest prices before it answers. */
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
  /** Settles once every replica listening has confirmed the payload, or `NOTIFY_WAIT_MS` after the call. */
  heard: () => Promise<void>
  cancel: () => void
}

/**
 * Every replica, on another's notification, clears its read cache and then confirms on the same
 * channel; the writer answers once as many replicas as listen (itself included) have confirmed,
 * so no replica serves the old data after the answer, however late it read its notification.
 * A (re)connect clears the read cache too, as notifications sent meanwhile are lost (D26);
 * on PGlite one process holds the database, so the writer's own refresh is enough.
 */
async function cacheInvalidation (app: FastifyInstance): Promise<void> {
  const waiting = new Map<string, () => void>()
  const channel = pricesChangedChannel(app.database)
  let connections = 0
  const stopListening = await listenForPriceChanges(app.database, {
    confirmed: (payload) => { waiting.get(payload)?.() },
    changed: (payload) => {
      const ownWrite = waiting.get(payload)
      if (ownWrite !== undefined) {
        ownWrite() // this replica refreshes its own cache after its commit
        return
      }
      app.readCache.clear()
      app.log.debug({ channel }, 'read cache cleared by a notification')
      // A write from outside the service (the import script) sends no payload and waits for nobody.
      if (payload !== '') {
        confirmPricesChanged(app.database, payload)
          .catch((err: unknown) => { app.log.warn({ err, channel }, 'could not confirm a notification; its writer answers after its wait') })
      }
    },
    connected: () => {
      connections++
      app.readCache.clear()
      if (connections > 1) app.log.info({ channel }, 'notification listener reconnected; read cache cleared')
    }
  })
  if (stopListening !== undefined) app.addHook('onClose', async () => { await stopListening().catch(() => {}) })

  const expectNotification = async (): Promise<Notification> => {
    const payload = randomUUID()
    if (stopListening === undefined) return { payload, heard: async () => {}, cancel: () => {} }
    // Counted before the write begins: a replica that starts listening later clears at its connect.
    // At least this replica's own notification, should its listener be reconnecting.
    const expected = Math.max(await countListeners(app.database).catch(() => 1), 1)
    let confirmed = 0
    let settled = false
    let timer: NodeJS.Timeout | undefined
    let settle = (): void => {}
    const all = new Promise<void>((resolve) => { settle = resolve })
    const done = (): void => {
      settled = true
      clearTimeout(timer)
      waiting.delete(payload)
      settle()
    }
    // Registered before the write runs: this replica may hear its own commit before COMMIT returns.
    waiting.set(payload, () => { if (++confirmed >= expected) done() })
    const heard = async (): Promise<void> => {
      // The wait starts at the commit, however long the write itself took.
      if (!settled) {
        timer = setTimeout(() => {
          app.log.warn({ channel, confirmed, expected }, 'not every replica confirmed a change within the wait; answering anyway')
          done()
        }, NOTIFY_WAIT_MS)
      }
      await all
    }
    return { payload, heard, cancel: done }
  }

  app.decorate('commitAndInvalidate', async <T>(write: ReaderVisibleWrite<T>): Promise<T> => {
    const notification = await expectNotification()
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
    const [refreshed] = await Promise.all([settlesWithin(app.readCache.refreshLatest(), NOTIFY_WAIT_MS), notification.heard()])
    // A reload held up by a stalled database must not delay the answer, nor leave the old answer
    // serving after it: the cache is emptied and the next readers load for themselves.
    if (!refreshed) app.readCache.clear()
    await app.cachePurge.changed(cycles)
    write.count?.(result)
    return result
  })
}

export default fp(cacheInvalidation, { name: 'cache-invalidation', dependencies: ['database', 'read-cache', 'cache-purge'] })
