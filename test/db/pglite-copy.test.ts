import { createServer, connect, type AddressInfo, type Socket } from 'node:net'
import { sql } from 'drizzle-orm'
import t from '../support/file-test.js'
import { createPglite, pgliteDatabase, rowsOf } from '../../src/db/client.js'
import { copyBatchesPglite, pgliteTransactionOf } from '../../src/db/pglite-copy.js'
import { transactionClientOf } from '../../src/db/postgres/copy.js'
import { packRows, type PriceRow } from '../../src/domain/price-rows.js'
import { pgliteTemplate } from '../support/pglite-template.js'

/** PGlite's COPY of an ingest (src/db/pglite-copy.ts) on the real drivers; what the writer does with it: test/db/ingest-write. */

const row = (town: string, superPetrol = '180.00'): PriceRow => ({
  line: 2, town, validFrom: '2026-01-15', validTo: '2026-02-14', superPetrol, diesel: '170.00', kerosene: '150.00'
})

const database = await pgliteDatabase(await createPglite('memory://', { loadDataDir: await pgliteTemplate() }))
t.teardown(async () => { await database.close() })
/** Both ends of a TCP connection on the loopback. */
async function socketPair (): Promise<{ server: Socket, client: Socket }> {
  const listener = createServer()
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  const accepted = new Promise<Socket>((resolve) => listener.once('connection', resolve))
  const client = connect((listener.address() as AddressInfo).port, '127.0.0.1')
  const server = await accepted
  listener.close()
  return { server, client }
}

const stored = async (): Promise<string[]> =>
  rowsOf<{ town: string }>(await database.db.execute(sql`SELECT town FROM fuel_prices ORDER BY id`)).map((r) => r.town)

t.test('a changed Drizzle internal is reported, not worked around', async (t) => {
  t.throws(() => pgliteTransactionOf({}), { message: 'drizzle-orm internals changed: a PGlite transaction has no session.client (COPY needs it)' })
  await database.db.transaction(async (tx) => {
    t.type(pgliteTransactionOf(tx).query, 'function', 'tx.session.client is PGlite\'s own transaction')
    // And it is not mistaken for postgres.js's: the PostgreSQL COPY refuses it.
    t.throws(() => transactionClientOf(tx), { message: 'drizzle-orm internals changed: a postgres-js transaction has no session.client (COPY needs it)' })
  })
})

t.test('[D46] COPY statements of the rows asked for, inside the transaction; COPY\'s escaping keeps odd text exact; a refused COPY writes nothing', async (t) => {
  // Tab, newline and backslash are COPY's own syntax: D30 keeps them out of files; the escaping itself is checked here.
  const odd = 'Back\\slash\tTab\nLine\rEnd'
  await t.rejects(database.db.transaction(async (tx) => {
    const client = pgliteTransactionOf(tx)
    const query = client.query.bind(client)
    // A byte sent on a socket as each COPY starts: served between the statements, as a request would be.
    const { server, client: peer } = await socketPair()
    const events: string[] = []
    server.on('data', () => events.push('socket'))
    client.query = (async (...args: Parameters<typeof query>) => {
      events.push(args[0].split(' ')[0] as string)
      peer.write('x')
      return await query(...args)
    }) as typeof query
    await copyBatchesPglite(client, [packRows([row('Nairobi'), row(odd)]), packRows([row('Mombasa')])], 2)
    await new Promise((resolve) => setTimeout(resolve, 20))
    peer.destroy()
    server.destroy()
    t.strictSame(events, ['COPY', 'socket', 'COPY', 'socket'], 'two rows a statement: two COPYs, the sockets served between them')
    t.strictSame(rowsOf<{ town: string }>(await tx.execute(sql`SELECT town FROM fuel_prices ORDER BY id`)).map((r) => r.town), ['Nairobi', odd, 'Mombasa'], 'written in the transaction, in order')
    tx.rollback()
  }), { message: 'Rollback' })
  t.strictSame(await stored(), [], 'and gone with it')

  // A row the table's CHECK refuses (prices > 0): the whole COPY fails with the constraint's name.
  await t.rejects(database.db.transaction(async (tx) => {
    await copyBatchesPglite(pgliteTransactionOf(tx), [packRows([row('Kisumu'), row('Nakuru', '0.00')])], 20_000)
  }), { code: '23514', constraint: 'fuel_prices_prices_check' })
  t.strictSame(await stored(), [], 'nothing of the refused COPY')
  await database.db.transaction(async (tx) => { await copyBatchesPglite(pgliteTransactionOf(tx), [packRows([row('Eldoret')])], 20_000) })
  t.strictSame(await stored(), ['Eldoret'], 'the database is usable after it')
})
