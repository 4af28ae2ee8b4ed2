import t from '../support/file-test.js'
import { pricesChangedChannel } from '../../src/db/channels.js'
import type { PriceRow } from '../../src/domain/price-rows.js'
import { AUTH, HEADER, TOKEN, csv, upload, writeRows } from '../fixtures/ingest.js'
import { build, postgresOnly, resetData, testDatabase } from '../helper.js'
import { seedFixture } from '../routes/_fixtures.js'

/**
 * D26/D54 notifications between replicas: PostgreSQL only (on PGlite one process holds the
 * database, and the route clears its own cache).
 */

let line = 1
const row = (town: string, validFrom: string, validTo: string, superPetrol = '180.50'): PriceRow =>
  ({ line: ++line, town, validFrom, validTo, superPetrol, diesel: '170.00', kerosene: '160.25' })

const JAN = ['2026-01-15', '2026-02-14'] as const

const withdraw = (validFrom: string, headers: Record<string, string> = AUTH): { method: 'DELETE', url: string, headers: Record<string, string> } =>
  ({ method: 'DELETE', url: `/v1/cycles/${validFrom}`, headers })

t.test('[D26] on PostgreSQL a committed ingest notifies the replicas; a rolled-back or dry one does not', postgresOnly, async (t) => {
  await resetData()
  const database = await testDatabase()
  const sql = database.sql as NonNullable<typeof database.sql>
  const heard: string[] = []
  const subscription = await sql.listen(pricesChangedChannel(database), (payload) => { heard.push(payload) })
  t.teardown(async () => { await subscription.unlisten() })
  const settle = async () => { await new Promise((resolve) => setTimeout(resolve, 200)) }

  const app = await build(t, { config: { ingestToken: TOKEN } })
  t.equal((await upload(app, csv(HEADER, '15-01-2026,14-02-2026,A,180.50,170.00,160.25'), { query: '/dry-run' })).statusCode, 200)
  await t.rejects(writeRows(database, [row('A', ...JAN), row('B', ...JAN, '0.00')]))
  await settle()
  t.strictSame(heard, [], 'nothing committed, nothing heard')
  await writeRows(database, [row('A', ...JAN)])
  await settle()
  t.strictSame(heard, [''])
})

// On PGlite one process holds the database, so there is no other replica to tell.
t.test('[D54] every replica stops serving the cycle before the answer (the notification, as an ingest)', postgresOnly, async (t) => {
  await seedFixture()
  const writer = await build(t, { config: { ingestToken: TOKEN } })
  const reader = await build(t, { config: { ingestToken: TOKEN } })
  await reader.ready()
  t.equal((await reader.inject('/v1/prices/latest')).json()[0].valid_from, '2026-10-15', 'the other replica has it cached')
  t.equal((await writer.inject(withdraw('2026-10-15'))).statusCode, 200)
  t.equal((await reader.inject('/v1/prices/latest')).json()[0].valid_from, '2026-09-15', 'and no longer serves it')
})
