import t from 'tap'
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
  const started = performance.now()
  const res = await upload(app, file)
  t.comment(`100,000-row ingest on ${database.kind}: ${Math.round(performance.now() - started)} ms`)
  const statements = database.statements() - statementsBefore
  t.comment(`statements sent: ${statements}`)
  t.equal(res.statusCode, 201, res.body.slice(0, 200))
  t.strictSame(withoutTimestamp(res.json()), { status: 'success', records_processed: 100_000, inserted: 100_000, updated: 0, unchanged: 0 })
  // Lock + five batches of 20,000 (+ BEGIN/COMMIT where the driver counts them): not 100,000.
  t.ok(statements <= 10, `${statements} statements`)

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
