import { sql } from 'drizzle-orm'
import t from '../support/file-test.js'
import { NOTIFY_WAIT_MS } from '../../src/read-cache/invalidation.js'
import { build, postgresOnly, testDatabase } from '../helper.js'
import { raiseOctober } from '../read-cache/_writes.js'
import { seedFixture } from '../routes/_fixtures.js'

/**
 * After its commit a write reloads the latest prices before it answers, serving the answer from
 * before it meanwhile. A database that stalls right after the commit must neither hold the answer
 * nor leave the old prices serving once it is given. PostgreSQL only: the stall is another
 * session's lock on the table, and PGlite has one session.
 */

// The fixture: cycles 2026-08-15, 2026-09-15 and 2026-10-15 (the latest) of five towns.
t.beforeEach(seedFixture)

type Prices = Array<{ super_petrol: number }>
const cents = (prices: Prices): number[] => prices.map((p) => Math.round(p.super_petrol * 100))

t.test('a reload held up after the commit answers the write after the wait, and no reader gets the old prices after it', postgresOnly, async (t) => {
  const app = await build(t)
  const before = (await app.inject('/v1/prices/latest')).json() as Prices
  const database = await testDatabase()
  let release = (): void => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  let holding: Promise<void> | undefined
  t.teardown(async () => { release(); await holding })

  const started = performance.now()
  const changed = await app.commitAndInvalidate({
    run: async (notifyPayload) => {
      const raised = await raiseOctober(notifyPayload) // committed
      // Then the table stalls for every other session: the reload of the latest prices waits.
      let locked = (): void => {}
      const lockTaken = new Promise<void>((resolve) => { locked = resolve })
      holding = database.db.transaction(async (tx) => {
        await tx.execute(sql`LOCK TABLE fuel_prices IN ACCESS EXCLUSIVE MODE`)
        locked()
        await released
      })
      await lockTaken
      return raised
    },
    changedCycles: () => ['2026-10-15']
  })
  const elapsed = performance.now() - started
  t.equal(changed, 5)
  t.ok(elapsed >= NOTIFY_WAIT_MS - 50 && elapsed < NOTIFY_WAIT_MS + 1500, `answered after the wait for the reload (${Math.round(elapsed)} ms)`)

  // Asked while the table is still locked, a reader waits for the database instead of getting the
  // old prices from memory; once the stall ends it gets the write.
  const reading = app.inject('/v1/prices/latest')
  let answered = false
  void reading.then(() => { answered = true })
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(answered, false, 'no answer from memory while the database stalls')
  release()
  await holding
  t.strictSame(cents((await reading).json() as Prices), cents(before).map((c) => c + 100), 'the reader sees the write')
})
