import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { drizzle } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import type { AppDb } from '../src/db/client.js'
import { PricesRepository } from '../src/db/prices.js'
import { CpuMeter } from './cpu.js'
import { rawGet, runnerAddress, scratchFile, track } from './processes.js'

/**
 * The cold /v1/prices ceiling: pgbench running the service's own SQL (from Drizzle's logger, checked
 * to answer the same) at the HTTP load's concurrency, on the pages the cold scenario asks for.
 */
export interface SqlCeiling {
  /** The SQL as pgbench runs it (`:lim`, `:off`). */
  script: string
  /** The service's answer and the SQL's to `limit=100&offset=0`, checked equal. */
  checkedBytes: number
}

const LIM = 137
const OFF = 517

/** `sameIds`: false when the service's rows live elsewhere (PGlite) and were numbered in another order. */
export async function pricesPageSql (dbUrl: string, serviceUrl: string, sameIds: boolean): Promise<SqlCeiling> {
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {} })
  try {
    let captured: { text: string, params: unknown[] } | undefined
    const db = drizzle(sql, { logger: { logQuery: (text, params) => { captured = { text, params } } } }) as unknown as AppDb
    const repository = new PricesRepository({ kind: 'postgres', db, sql, openListener: undefined, schema: undefined, close: async () => {} })
    await repository.listPrices({ limit: LIM, offset: OFF })
    if (captured === undefined) throw new Error('Drizzle logged no query')
    const { text, params } = captured
    const names = params.map((p) => Number(p) === LIM ? ':lim' : Number(p) === OFF ? ':off' : undefined)
    if (names.some((n) => n === undefined) || !names.includes(':lim') || !names.includes(':off')) {
      throw new Error(`cannot map the page parameters ${JSON.stringify(params)} of: ${text}`)
    }
    const asPgbench = text.replace(/\$(\d+)/g, (_, i: string) => names[Number(i) - 1] as string).replace(/\s+/g, ' ').trim()
    const check = asPgbench.replace(/:lim/g, '100').replace(/:off/g, '0')
    const [row] = await sql.unsafe(check).values()
    const fromSql = String(row?.[0] ?? '[]')
    const res = await rawGet(`${serviceUrl}/v1/prices?limit=100&offset=0`, { 'x-forwarded-for': runnerAddress() })
    if (res.status !== 200) throw new Error(`GET /v1/prices?limit=100 answered ${res.status}`)
    const canonical = (json: string): string => JSON.stringify((JSON.parse(json) as Array<Record<string, unknown>>).map((r) => sameIds ? r : { ...r, id: undefined }))
    if (canonical(res.body.toString('utf8')) !== canonical(fromSql)) {
      throw new Error(`pgbench SQL and GET /v1/prices?limit=100 disagree:\n${res.body.toString('utf8').slice(0, 300)}\n${fromSql.slice(0, 300)}`)
    }
    if (fromSql.length < 10) throw new Error('GET /v1/prices?limit=100 is empty: no data to measure')
    return { script: `\\set lim random(100, 199)\n\\set off random(0, 999)\n${asPgbench};\n`, checkedBytes: res.body.length }
  } finally {
    await sql.end({ timeout: 2 })
  }
}

export interface PgbenchResult { transactions: number, tps: number, latencyMs: number, cpuSeconds: number, backendsVisible: boolean }

let scripts = 0

/** `pgbench -M prepared -c <connections> -j 1 -T <seconds>` on the script; CPU of its backends. */
export async function pgbench (dbUrl: string, script: string, connections: number, seconds: number, admin: postgres.Sql): Promise<PgbenchResult> {
  const file = scratchFile(`page-${scripts++}.sql`)
  writeFileSync(file, script)
  const database = new URL(dbUrl).pathname.slice(1)
  const meter = new CpuMeter([], admin, database)
  await meter.start()
  const child = track(spawn('pgbench', ['-n', '-M', 'prepared', '-c', String(connections), '-j', '1', '-T', String(Math.max(1, Math.round(seconds))), '-f', file, dbUrl], {
    stdio: ['ignore', 'pipe', 'pipe']
  }))
  let out = ''
  child.stdout?.setEncoding('utf8').on('data', (d: string) => { out += d })
  child.stderr?.setEncoding('utf8').on('data', (d: string) => { out += d })
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  const cpuSeconds = await meter.stop()
  const value = (re: RegExp): number => Number(re.exec(out)?.[1] ?? Number.NaN)
  const transactions = value(/number of transactions actually processed: (\d+)/)
  if (code !== 0 || !Number.isFinite(transactions)) throw new Error(`pgbench exited with ${String(code)}:\n${out.slice(-2000)}`)
  return {
    transactions,
    tps: value(/tps = ([\d.]+) \(without initial connection time\)/),
    latencyMs: value(/latency average = ([\d.]+) ms/),
    cpuSeconds,
    backendsVisible: meter.backendsVisible
  }
}
