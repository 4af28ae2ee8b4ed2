import { drizzle } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import type { AppDb } from '../../src/db/client.js'
import { PricesRepository } from '../../src/db/prices.js'
import type { SqlArgs, SqlResult } from './protocol.js'
import { percentile } from './stats.js'

/**
 * The ceiling of /v1/prices and /v1/towns: the service's own SQL in a raw postgres.js loop, with
 * the service's pool size and the HTTP load's concurrency. The SQL text and parameters are not
 * copied by hand: the service's repository (src/db/prices.ts) builds them and Drizzle's logger
 * hands them over, so the ceiling follows any change to the query. Then the rows are checked
 * against the service's answer to the same question before anything is timed.
 */
const args = JSON.parse(process.argv[2] ?? '{}') as SqlArgs
const sql = postgres(args.dbUrl, { max: args.poolMax, onnotice: () => {} })

let captured: { text: string, params: unknown[] } | undefined
// drizzle() also installs its pass-through date parsers on `sql`: the raw loop decodes rows as
// the service's driver does.
const db = drizzle(sql, { logger: { logQuery: (text, params) => { captured = { text, params } } } }) as unknown as AppDb
const repository = new PricesRepository({ kind: 'postgres', db, sql, schema: undefined, close: async () => {} })
const scenario = args.scenario
if (scenario.kind === 'towns') await repository.listTowns()
else await repository.listPrices({ town: scenario.town, limit: scenario.limit, offset: scenario.offset })
if (captured === undefined) throw new Error('Drizzle logged no query')
const { text, params } = captured

// Best case for the raw loop: a named prepared statement per connection. (The service prepares
// the /v1/prices shapes too; its /v1/towns goes through db.execute, unprepared.)
const query = async (): Promise<unknown[][]> => await sql.unsafe(text, params as never[], { prepare: true }).values()

// Same answer as the service before any timing: /v1/towns is one name per row; a /v1/prices
// page is one row holding the JSON body that PostgreSQL builds (src/db/prices.ts).
const res = await fetch(args.check.serviceUrl + args.check.path, { headers: { 'x-forwarded-for': args.check.forwardedFor } })
if (res.status !== 200) throw new Error(`GET ${args.check.path} answered ${res.status}`)
const fromService = JSON.stringify(await res.json())
const rows = await query()
const fromSql = scenario.kind === 'towns'
  ? rows.map((values) => values[0])
  : JSON.parse(String(rows[0]?.[0] ?? '[]')) as unknown[]
if (fromService !== JSON.stringify(fromSql)) {
  throw new Error(`ceiling SQL and GET ${args.check.path} disagree:\n${fromService.slice(0, 300)}\n${JSON.stringify(fromSql).slice(0, 300)}`)
}
if (fromSql.length === 0) throw new Error(`GET ${args.check.path} is empty: no data to measure`)

async function workers (durationSec: number, latencies?: number[]): Promise<number> {
  const until = performance.now() + durationSec * 1000
  const counts = await Promise.all(Array.from({ length: args.concurrency }, async () => {
    let n = 0
    while (performance.now() < until) {
      const start = performance.now()
      await query()
      latencies?.push(performance.now() - start)
      n++
    }
    return n
  }))
  return counts.reduce((a, b) => a + b, 0)
}

if (args.warmupSec > 0) await workers(args.warmupSec)
const latencies: number[] = []
const start = performance.now()
const queries = await workers(args.durationSec, latencies)
const durationSec = (performance.now() - start) / 1000
latencies.sort((a, b) => a - b)
const out: SqlResult = {
  queries,
  durationSec,
  qps: queries / durationSec,
  p50: percentile(latencies, 50),
  p99: percentile(latencies, 99),
  sqlText: text.replace(/\s+/g, ' ').trim(),
  params
}
await sql.end({ timeout: 2 })
console.log(JSON.stringify(out))
