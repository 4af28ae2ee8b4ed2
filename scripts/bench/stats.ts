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

export interface TableRow {
  scenario: string
  service: string
  serviceP99: string
  ceiling: string
  ceilingP99: string
  ratio: number | undefined
  /** e.g. '≥ 0.6'; undefined = informational. */
  target?: { op: '>=' | '<=', value: number }
  /** Set when the measurement itself is suspect (unexpected statuses, errors). */
  problem?: string
}

const HEADER = ['scenario', 'service req/s', 'p99 ms', 'ceiling req/s', 'ceiling p99', 'ratio', 'target', 'met?']

export function markdownTable (header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n')
}

export function resultsTable (rows: TableRow[]): string {
  return markdownTable(HEADER, rows.map((r) => {
    const target = r.target === undefined ? 'info' : `${r.target.op === '>=' ? '≥' : '≤'} ${r.target.value}`
    let met = r.target === undefined ? 'info' : 'n/a'
    if (r.target !== undefined && r.ratio !== undefined) {
      const ok = r.target.op === '>=' ? r.ratio >= r.target.value : r.ratio <= r.target.value
      met = ok ? 'yes' : '**no**'
    }
    if (r.problem !== undefined) met += ` (⚠ ${r.problem})`
    return [r.scenario, r.service, r.serviceP99, r.ceiling, r.ceilingP99, r.ratio === undefined ? '—' : r.ratio.toFixed(2), target, met]
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
