import { sql } from 'drizzle-orm'
import t from '../support/file-test.js'
import { rowsOf } from '../../src/db/client.js'
import { CyclesRepository } from '../../src/db/cycles.js'
import { PricesRepository, type PriceFilter } from '../../src/db/prices.js'
import { resetData, testDatabase } from '../helper.js'

/**
 * Issue "Performance" item 2: every query behind /v1/prices and /v1/towns (and latest) reads an
 * index on a realistic table — 20 years of monthly cycles for 233 towns — both as the planner
 * plans it for these parameters and as the generic plan a prepared statement settles on.
 */
const database = await testDatabase()
await resetData()
await database.db.execute(sql`
  INSERT INTO fuel_prices (town, super_petrol, diesel, kerosene, valid_from, valid_to)
  SELECT 'Town ' || lpad(t::text, 3, '0'), 150 + (t % 50), 140 + (t % 40), 120 + (t % 30),
         (date '2006-11-15' + make_interval(months => m))::date,
         (date '2006-11-15' + make_interval(months => m + 1) - interval '1 day')::date
  FROM generate_series(1, 233) AS t, generate_series(0, 239) AS m`)
await database.db.execute(sql`ANALYZE fuel_prices`)
t.teardown(resetData)

interface PlanNode { 'Node Type': string, 'Relation Name'?: string, 'Index Name'?: string, Alias?: string, 'Actual Rows'?: number, 'Rows Removed by Filter'?: number, Plans?: PlanNode[] }

const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)]

/** Every node that reads fuel_prices or one of its indexes (a bitmap index scan names no table). */
function scans (node: PlanNode): Array<{ type: string, index: string | undefined }> {
  const reads = node['Relation Name'] === 'fuel_prices' || (node['Index Name'] ?? '').startsWith('fuel_prices')
  const here = reads ? [{ type: node['Node Type'], index: node['Index Name'] }] : []
  return [...here, ...(node.Plans ?? []).flatMap(scans)]
}

/** Index, index-only and bitmap scans read an index; a sequential scan reads the whole table. */
const INDEX_READS = ['Index Scan', 'Index Only Scan', 'Bitmap Heap Scan', 'Bitmap Index Scan']
const notIndexed = (found: Array<{ type: string }>): Array<{ type: string }> => found.filter((s) => !INDEX_READS.includes(s.type))

/** The statements a repository call sends, captured at the driver. */
async function statementsOf (call: () => Promise<unknown>): Promise<Array<{ text: string, params: readonly unknown[] }>> {
  const seen: Array<{ text: string, params: readonly unknown[] }> = []
  database.onStatement = (text, params) => seen.push({ text, params })
  try { await call() } finally { database.onStatement = undefined }
  return seen
}

async function explain (text: string, params: readonly unknown[], generic: boolean, analyze = false): Promise<PlanNode> {
  const query = `EXPLAIN (${analyze ? 'ANALYZE, ' : ''}FORMAT JSON) ${text}`
  const run = async (q: string, p: readonly unknown[]): Promise<unknown> =>
    database.sql !== undefined ? await database.sql.unsafe(q, p as never[]) : rowsOf(await database.db.execute(sql.raw(inline(q, p))))
  // plan_cache_mode only matters inside a transaction-free session setting; set and reset it.
  await database.db.execute(sql.raw(`SET plan_cache_mode = ${generic ? 'force_generic_plan' : 'auto'}`))
  try {
    const rows = await run(query, params) as Array<Record<string, unknown>>
    const value = Object.values(rows[0] as object)[0]
    const plan = (typeof value === 'string' ? JSON.parse(value) : value) as Array<{ Plan: PlanNode }>
    return (plan[0] as { Plan: PlanNode }).Plan
  } finally {
    await database.db.execute(sql.raw('SET plan_cache_mode = auto'))
  }
}

// PGlite's EXPLAIN through Drizzle takes no parameters here, so they are inlined as literals.
function inline (text: string, params: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_m, i: string) => {
    const v = params[Number(i) - 1]
    return typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`
  })
}

const repo = new PricesRepository(database)
const filters: Array<[string, PriceFilter]> = [
  ['no filter', { limit: 100, offset: 0 }],
  ['town filter', { town: 'town 042', limit: 100, offset: 0 }],
  ['date bounds (one cycle)', { startDate: '2020-01-15', endDate: '2020-02-14', limit: 100, offset: 0 }],
  ['start date only', { startDate: '2025-01-15', limit: 100, offset: 0 }],
  ['end date only', { endDate: '2008-01-14', limit: 100, offset: 0 }],
  ['town and dates', { town: 'Town 007', startDate: '2015-01-15', endDate: '2016-01-14', limit: 100, offset: 0 }],
  ['deep offset', { limit: 100, offset: 50_000 }]
]

for (const [name, filter] of filters) {
  t.test(`/v1/prices ${name}: index scan, no sequential scan or sort of the table`, async (t) => {
    const [statement] = await statementsOf(async () => await repo.listPrices(filter))
    t.ok(statement, 'one statement sent')
    for (const generic of [false, true]) {
      const found = scans(await explain(statement!.text, statement!.params, generic))
      t.ok(found.some((s) => s.index?.startsWith('fuel_prices_') === true), `an index is read: ${JSON.stringify(found)}`)
      t.same(notIndexed(found), [], `${generic ? 'generic' : 'custom'} plan: ${JSON.stringify(found)}`)
    }
  })
}

t.test('/v1/towns: the skip scan probes the town index only', async (t) => {
  const towns = await repo.listTowns()
  t.equal(towns.length, 233)
  t.equal(towns[0], 'Town 001')
  const [statement] = await statementsOf(async () => await repo.listTowns())
  const found = scans(await explain(statement!.text, statement!.params, false))
  t.not(found.length, 0)
  t.same(found.filter((s) => s.index !== 'fuel_prices_town_order_idx'), [], JSON.stringify(found))
})

t.test('/v1/prices/latest: max(valid_from) and the cycle read both from the order index', async (t) => {
  const rows = await repo.latestPrices()
  t.equal(rows.length, 233)
  t.equal((JSON.parse(rows[0]?.json ?? '{}') as { valid_from?: string }).valid_from, '2026-10-15')
  const [statement] = await statementsOf(async () => await repo.latestPrices())
  const found = scans(await explain(statement!.text, statement!.params, false))
  t.ok(found.some((s) => s.index === 'fuel_prices_order_idx'), JSON.stringify(found))
  t.same(notIndexed(found), [], JSON.stringify(found))
})

t.test('the CSV export: each keyset batch starts its index scan at its own cycle, never at the table\'s start', async (t) => {
  // Thirty batches of 1,000: the thirtieth follows the 29,000th row, 108 rows into the 125th cycle.
  const sizes: number[] = []
  const statements = await statementsOf(async () => {
    for await (const batch of repo.streamPrices({ offset: 0 }, 1000)) {
      if (sizes.push(batch.length) === 30) break
    }
  })
  t.strictSame([sizes.length, new Set(sizes).size, sizes[0], statements.length], [30, 1, 1000, 30])
  const last = statements[29] as { text: string, params: readonly unknown[] }
  const plan = await explain(last.text, last.params, false, true)
  const read = planNodes(plan).filter((n) => n['Index Name'] === 'fuel_prices_order_idx')
  t.equal(read.length, 1, JSON.stringify(plan))
  // Read from the index: the batch, and before it only the rows of its own cycle up to the last one sent.
  t.strictSame([read[0]?.['Actual Rows'], read[0]?.['Rows Removed by Filter']], [1000, 108])
})

t.test('/v1/cycles: a deep page summarises its own cycles, not every cycle before it', async (t) => {
  const cycles = new CyclesRepository(database.db)
  const page = JSON.parse(await cycles.listCycles(10, 200)) as Array<{ valid_from: string, towns: number }>
  t.strictSame([page.length, page[0]?.valid_from, page[9]?.valid_from, page[0]?.towns], [10, '2010-02-15', '2009-05-15', 233])
  const [statement] = await statementsOf(async () => await cycles.listCycles(10, 200))
  const plan = await explain(statement!.text, statement!.params, false, true)
  const read = planNodes(plan).filter((n) => n.Alias === 'f')
  t.equal(read.length, 1, JSON.stringify(plan))
  // Ten cycles of 233 rows, the eleventh (sorted whole to know the tenth has ended) and one row of
  // the twelfth: 2,564 rows, where summarising from the newest cycle read 211 cycles and a row (49,164).
  t.equal(read[0]?.['Actual Rows'], 11 * 233 + 1, JSON.stringify(read[0]))
})
