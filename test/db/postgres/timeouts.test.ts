import t from '../../support/file-test.js'
import postgres from 'postgres'
import { postgresOptions } from '../../../src/db/postgres/options.js'
import { TEST_POSTGRES_URL, needs } from '../../services.js'

// D47: every connection the service opens carries the server-side bounds.
t.test('[D47] statement, lock and idle-in-transaction timeouts on every connection', await needs('postgres'), async (t) => {
  const sql = postgres(TEST_POSTGRES_URL, postgresOptions({ url: TEST_POSTGRES_URL, statementTimeoutMs: 15000 }))
  t.teardown(async () => { await sql.end() })
  const [settings] = await sql`SELECT current_setting('statement_timeout') AS statement,
    current_setting('lock_timeout') AS lock, current_setting('idle_in_transaction_session_timeout') AS idle`
  t.same({ ...settings }, { statement: '15s', lock: '5s', idle: '1min' })
  // A transaction left idle is ended by the server, and the pool replaces its connection.
  const short = postgres(TEST_POSTGRES_URL, { ...postgresOptions({ url: TEST_POSTGRES_URL }), connection: { idle_in_transaction_session_timeout: 300 } })
  t.teardown(async () => { await short.end() })
  await t.rejects(short.begin(async (tx) => {
    await tx`SELECT 1`
    await new Promise((resolve) => setTimeout(resolve, 800))
    await tx`SELECT 2`
  }), { code: 'CONNECTION_CLOSED' }, 'an idle transaction is ended by the server')
  t.same([...await short`SELECT 3 AS n`], [{ n: 3 }], 'and the next query gets a working connection')
})
