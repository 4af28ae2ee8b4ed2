import { sql } from 'drizzle-orm'
import { notifyPricesChanged } from '../../src/db/channels.js'
import { rowsOf } from '../../src/db/client.js'
import { testDatabase } from '../helper.js'

/** A write no route makes: October's prices (the fixture's latest cycle) raised by one shilling,
 * announced as a write must be. Returns how many records it changed. */
export async function raiseOctober (notifyPayload: string): Promise<number> {
  const database = await testDatabase()
  return await database.db.transaction(async (tx) => {
    const raised = rowsOf<{ id: number }>(await tx.execute(sql`UPDATE fuel_prices SET super_petrol = super_petrol + 1 WHERE valid_from = '2026-10-15' RETURNING id`))
    await notifyPricesChanged(tx, database, notifyPayload)
    return raised.length
  })
}
