import { execFileSync, spawn } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BENCH_DIR, scratchFile, track } from './processes.js'
import type { LoadRequest, LoadResult } from './protocol.js'

/** The load generator: Debian's wrk, one thread, bench/fresh-client.lua giving each request a fresh X-Forwarded-For. */
export const WRK = process.env.BENCH_WRK ?? '/usr/bin/wrk'

/** wrk's version line, installing Debian's package when it is missing and apt-get is usable. */
export function ensureWrk (log: (m: string) => void): string {
  if (!existsSync(WRK)) {
    log(`${WRK} not found: apt-get install -y wrk`)
    try {
      execFileSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'inherit' })
    } catch {
      throw new Error(`wrk is needed: install it with \`sudo apt-get install -y wrk\` (Debian/Ubuntu) or set BENCH_WRK to its path`)
    }
  }
  // `wrk -v` prints its version and exits 1.
  try {
    return execFileSync(WRK, ['-v'], { encoding: 'utf8' }).split('\n')[0] ?? 'wrk'
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? 'wrk').split('\n')[0] ?? 'wrk'
  }
}

let files = 0

export interface WrkRun {
  url: string
  requests: LoadRequest[]
  connections: number
  durationSec: number
  ipStart: number
  /** Count answers by status (the Lua `response` hook: slower, for the soak and replica runs). */
  statuses?: boolean
}

interface WrkDone {
  requests: number
  durationUs: number
  p50Us: number
  p99Us: number
  socketErrors: number
  non2xx3xx: number
  timeouts: number
  ipNext: number
  statuses: string
}

export async function wrk (run: WrkRun): Promise<LoadResult> {
  const file = scratchFile(`requests-${files++}.txt`)
  writeFileSync(file, run.requests.map((r) => [r.path, ...Object.entries(r.headers ?? {}).map(([k, v]) => `${k}: ${v}`)].join('\t')).join('\n') + '\n')
  const args = ['-t1', `-c${run.connections}`, `-d${Math.max(1, Math.round(run.durationSec))}s`, '--timeout', '30s',
    '-s', join(BENCH_DIR, 'fresh-client.lua'), run.url, '--', file, String(run.ipStart), ...(run.statuses === true ? ['statuses'] : [])]
  const child = track(spawn(WRK, args, { stdio: ['ignore', 'pipe', 'inherit'] }))
  let out = ''
  child.stdout?.setEncoding('utf8').on('data', (d: string) => { out += d })
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  const line = out.trim().split('\n').filter((l) => l.startsWith('{')).pop()
  if (code !== 0 || line === undefined) throw new Error(`wrk exited with ${String(code)}:\n${out.slice(-2000)}`)
  const done = JSON.parse(line) as WrkDone
  const statuses: Record<string, number> = {}
  for (const part of done.statuses.split(',').filter((p) => p !== '')) {
    const [status = '?', count = '0'] = part.split(':')
    statuses[status] = (statuses[status] ?? 0) + Number(count)
  }
  const durationSec = done.durationUs / 1e6
  return {
    requests: done.requests,
    durationSec,
    rps: done.requests / durationSec,
    p50: done.p50Us / 1000,
    p99: done.p99Us / 1000,
    statuses,
    non2xx3xx: done.non2xx3xx,
    errors: done.socketErrors,
    timeouts: done.timeouts,
    ipNext: done.ipNext
  }
}
