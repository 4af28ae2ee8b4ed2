import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'

/** p in [0, 100] of an ascending array (nearest rank); NaN when empty. */
export function percentile (sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank] as number
}

export function median (values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50)
}

export const num = (n: number, digits = 0): string =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '—'

export const ms = (n: number): string => Number.isFinite(n) ? (n < 10 ? n.toFixed(2) : n.toFixed(1)) : '—'

export const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`

export const cpuCell = (seconds: number): string => Number.isFinite(seconds) ? `${num(seconds * 1e6)} µs` : '—'

export interface TableRow {
  scenario: string
  service: string
  /** The server's CPU time per request (utime + stime from /proc), or '—'. */
  serviceCpu?: string
  serviceP99: string
  ceiling: string
  ceilingCpu?: string
  /** service req/s ÷ ceiling req/s; for times and memory, service ÷ ceiling (or limit). */
  ratio: number | undefined
  /** ceiling CPU/request ÷ service CPU/request: 1 = the service costs the server no more than the ceiling. */
  cpuRatio?: number
  /** HTTP rows: the design-card floor (bare Fastify + the same @fastify/cors and @fastify/rate-limit); targets apply to it. */
  floor?: { rps: string, cpu: string, ratio: number, cpuRatio: number }
  /** undefined = informational. A `>=` target applies to both ratios. */
  target?: { op: '>=' | '<=', value: number }
  /** Set when the measurement itself is suspect (unexpected statuses, errors). */
  problem?: string
  /** Each pass's figures, in order, for the report's list under the table. */
  passes?: string[]
}

const HEADER = ['scenario', 'service req/s', 'service CPU/req', 'p99 ms', 'floor req/s', 'floor CPU/req', 'vs floor req/s', 'vs floor CPU/req',
  'ceiling req/s', 'ceiling CPU/req', 'vs ceiling req/s', 'vs ceiling CPU/req', 'target', 'met?']

export function markdownTable (header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n')
}

const fixed = (r: number | undefined): string => r === undefined || !Number.isFinite(r) ? '—' : r.toFixed(2)

export function resultsTable (rows: TableRow[]): string {
  return markdownTable(HEADER, rows.map((r) => {
    const target = r.target === undefined ? 'info' : `${r.target.op === '>=' ? '≥' : '≤'} ${r.target.value}`
    let met = r.target === undefined ? 'info' : 'n/a'
    // A row with a floor is judged against it; the ceiling is then information.
    const judged = r.floor ?? (r.ratio === undefined ? undefined : { ratio: r.ratio, cpuRatio: r.cpuRatio })
    if (r.target !== undefined && judged !== undefined) {
      const { op, value } = r.target
      const ok = (x: number): string => (op === '>=' ? x >= value : x <= value) ? 'yes' : '**no**'
      met = judged.cpuRatio === undefined ? ok(judged.ratio) : `req/s ${ok(judged.ratio)}, CPU ${ok(judged.cpuRatio)}`
    }
    if (r.problem !== undefined) met += ` (⚠ ${r.problem})`
    const f = r.floor
    return [r.scenario, r.service, r.serviceCpu ?? '—', r.serviceP99, f?.rps ?? '—', f?.cpu ?? '—', fixed(f?.ratio), fixed(f?.cpuRatio),
      r.ceiling, r.ceilingCpu ?? '—', fixed(r.ratio), fixed(r.cpuRatio), target, met]
  }))
}

export interface Machine {
  cpu: string
  cores: number
  node: string
  postgres: string
  date: string
}

export function machine (postgresVersion: string): Machine {
  let cpu = 'unknown'
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu
  } catch { /* not Linux: keep the generic name */ }
  return { cpu, cores: availableParallelism(), node: process.version, postgres: postgresVersion, date: new Date().toISOString() }
}

export function machineLine (m: Machine): string {
  return `Machine: ${m.cpu}, ${m.cores} cores, Node ${m.node}, PostgreSQL ${m.postgres}; ${m.date}`
}

/** Every pass of the rows that alternate, so a reader sees how far the host moved them. */
export function passesList (rows: TableRow[]): string {
  return rows.filter((r) => r.passes !== undefined && r.passes.length > 0).map((r) =>
    `- ${r.scenario}\n${(r.passes ?? []).map((line, i) => `  ${i + 1}. ${line}`).join('\n')}`).join('\n')
}
