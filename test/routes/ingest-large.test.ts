import t from '../support/file-test.js'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../src/db/client.js'
import { build, resetData, testDatabase } from '../helper.js'
import { HEADER, TOKEN, storedRows, upload, withoutTimestamp } from '../fixtures/ingest.js'

/** D14: a file of 100,000 rows is accepted: no bind-parameter limit, a handful of statements. */

t.before(resetData)

const TOWNS = 250
const CYCLES = 400 // 250 × 400 = 100,000 rows

/** Cycle c (0 = 2026-01-15) going back one month each; prices vary by town and cycle. */
function largeCsv (): string {
  const lines = [HEADER]
  for (let c = 0; c < CYCLES; c++) {
    const month = 2026 * 12 + 0 - c // January 2026, then back
    const from = `15-${String((month % 12) + 1).padStart(2, '0')}-${Math.floor(month / 12)}`
    const to = `14-${String(((month + 1) % 12) + 1).padStart(2, '0')}-${Math.floor((month + 1) / 12)}`
    for (let i = 1; i <= TOWNS; i++) {
      lines.push(`${from},${to},Town ${String(i).padStart(3, '0')},${100 + (c % 50)}.${String(i % 100).padStart(2, '0')},150.00,${120 + i % 7}.50`)
    }
  }
  return lines.join('\n') + '\n'
}

t.test('[D14] 100,000 rows: accepted, exact counts, one pass of statements', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const database = await testDatabase()
  const file = largeCsv()
  t.comment(`file: ${(file.length / 1024 / 1024).toFixed(1)} MiB`)

  const statementsBefore = database.statements()
  const seen: string[] = []
  database.onStatement = (text) => { seen.push(text.trim().split(/[\s(]+/).slice(0, 2).join(' ')) }
  t.teardown(() => { database.onStatement = undefined })
  const started = performance.now()
  const res = await upload(app, file)
  t.comment(`100,000-row ingest on ${database.kind}: ${Math.round(performance.now() - started)} ms`)
  const statements = database.statements() - statementsBefore
  t.comment(`statements sent: ${statements}`)
  t.equal(res.statusCode, 201, res.body.slice(0, 200))
  t.strictSame(withoutTimestamp(res.json()), { status: 'success', records_processed: 100_000, inserted: 100_000, updated: 0, unchanged: 0 })
  // The lock, one savepoint and COPY (five of 20,000 rows on PGlite, one stream on PostgreSQL), the
  // notification and the read cache's reload, and on PostgreSQL the count of replicas that must
  // confirm it, sent before the write starts: a handful of statements, not 100,000.
  const lockAndSavepoint = ['SELECT set_config', 'SELECT pg_advisory_xact_lock', 'SELECT set_config', 'SAVEPOINT bulk_copy']
  t.strictSame(seen, database.kind === 'pglite'
    ? [...lockAndSavepoint, ...Array<string>(5).fill('COPY fuel_prices'), 'RELEASE SAVEPOINT', 'select "town",']
    : ['SELECT count', 'begin', ...lockAndSavepoint, 'COPY fuel_prices', 'RELEASE SAVEPOINT', 'SELECT pg_notify', 'commit', 'select "town",'], `${statements} statements`)

  const [counts] = rowsOf<{ n: number, pairs: number, cycles: number, towns: number }>(await database.db.execute(sql`
    SELECT count(*)::int AS n, count(DISTINCT (town, valid_from))::int AS pairs,
           count(DISTINCT valid_from)::int AS cycles, count(DISTINCT town)::int AS towns FROM fuel_prices`))
  t.strictSame(counts, { n: 100_000, pairs: 100_000, cycles: CYCLES, towns: TOWNS })

  const [oldest] = await storedRows().then((rows) => rows.slice(0, 1))
  t.strictSame(oldest, { id: oldest?.id, town: 'Town 001', super_petrol: `${100 + (399 % 50)}.01`, diesel: '150.00', kerosene: '121.50', valid_from: '1992-10-15', valid_to: '1992-11-14' })

  const dry = await upload(app, file, { query: '?dry_run=true' })
  t.equal(dry.statusCode, 200)
  t.match(dry.json(), { records_processed: 100_000, inserted: 0, updated: 0, unchanged: 100_000 })
  t.equal(dry.json().cycles.length, CYCLES)
})

t.test('[D10][D14] an invalid row deep in a large file of new cycles: its 400, nothing written, stored rows exact', async (t) => {
  // Every row is validated before anything is written (D10): the same 400, and nothing stored,
  // whether the error is on the first data line or the ten-thousandth.
  await resetData()
  const app = await build(t, { config: { ingestToken: TOKEN } })
  t.equal((await upload(app, `${HEADER}\n15-02-2026,14-03-2026,Town 001,180.00,170.00,160.00\n`)).statusCode, 201)
  const before = await storedRows()
  const lines = largeCsv().split('\n').slice(0, 10_001) // the header and 10,000 rows: 40 new cycles
  const file = (edit: (rows: string[]) => void): string => {
    const copy = [...lines]
    edit(copy)
    return copy.join('\n') + '\n'
  }
  const cases: Array<[string, string, Record<string, unknown>]> = [
    [file((l) => { l[9000] = (l[9000] as string).replace(/,150\.00,/, ',abc,') }), 'Invalid price value: abc',
      { line: 9001, column: 'Diesel (AGO)', problem: 'not_a_number', hint: 'A price is a plain decimal number with a point, such as 178.90.' }],
    [file((l) => { l[7999] = (l[7999] as string).replace('Town', '"Town') }), 'Malformed quoted field on line 8000', { line: 8000 }],
    [file((l) => { l.push(l[1] as string) }), 'Duplicate row for Town 001 from 2026-01-15 on lines 2 and 10002', { line: 10002 }]
  ]
  for (const [body, detail, fields] of cases) {
    const res = await upload(app, body)
    t.equal(res.statusCode, 400, detail)
    t.strictSame(res.json(), { detail, ...fields })
    t.strictSame(await storedRows(), before, 'nothing written')
  }
  const whole = file(() => {})
  const res = await upload(app, whole)
  t.equal(res.statusCode, 201)
  t.strictSame(withoutTimestamp(res.json()), { status: 'success', records_processed: 10_000, inserted: 10_000, updated: 0, unchanged: 0 })
  // The same file again: its cycles are stored now, so it is an upsert that changes nothing.
  t.strictSame(withoutTimestamp((await upload(app, whole)).json()), { status: 'success', records_processed: 10_000, inserted: 0, updated: 0, unchanged: 10_000 })
  const [counts] = rowsOf<{ n: number }>(await (await testDatabase()).db.execute(sql`SELECT count(*)::int AS n FROM fuel_prices`))
  t.equal(counts?.n, 10_001)
})
