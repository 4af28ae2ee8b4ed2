import postgres from 'postgres'
import t from '../../support/file-test.js'
import { postgresOptions } from '../../../src/db/postgres/options.js'
import { needs, TEST_POSTGRES_URL } from '../../services.js'

/**
 * D56: a new connection of the service's pool sends nothing before the statement that opened it.
 * postgres.js's own array-type query (`fetch_types`) used to run first on each one, and left that
 * backend's heap trimmed and regrown several times per page query from then on.
 */
t.test('[D56] new connections send only the statements asked for', await needs('postgres'), async (t) => {
  const sent: string[] = []
  const sql = postgres(TEST_POSTGRES_URL, {
    ...postgresOptions({ url: TEST_POSTGRES_URL, poolMax: 2 }),
    debug: (_connection, text) => { sent.push(text.replace(/\s+/g, ' ').trim()) }
  })
  t.teardown(async () => { await sql.end({ timeout: 2 }) })
  // Two at once, so that the pool opens both of its connections.
  const answers = await Promise.all([
    sql<Array<{ pid: number }>>`SELECT pg_backend_pid() AS pid, pg_sleep(0.05)`,
    sql<Array<{ pid: number }>>`SELECT pg_backend_pid() AS pid, pg_sleep(0.05)`
  ])
  const pids = answers.map(([row]) => row?.pid)
  t.equal(new Set(pids).size, 2, `two connections answered: ${pids.join(', ')}`)
  t.strictSame(sent, [
    'SELECT pg_backend_pid() AS pid, pg_sleep(0.05)',
    'SELECT pg_backend_pid() AS pid, pg_sleep(0.05)'
  ])
})
