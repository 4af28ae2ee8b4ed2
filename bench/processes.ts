import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServer, stopProcess } from '../test/support/processes.js'

export { cpuSeconds, memory, rawGet, resetPeak, type RawResponse } from '../test/support/processes.js'

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url))
export const ROOT = join(BENCH_DIR, '..')
export const INGEST_TOKEN = 'bench-token'

let scratch: string | undefined
/** A path in this bench's own temporary folder (wrk's request lists, pgbench's script), removed when the bench exits. */
export function scratchFile (name: string): string {
  if (scratch === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'fuel-bench-'))
    process.once('exit', () => { rmSync(made, { recursive: true, force: true }) })
    scratch = made
  }
  return join(scratch, name)
}

/** Every child still running, so a failure or Ctrl-C can stop them all (by pid, nothing else). */
const live = new Set<ChildProcess>()

export async function stopAll (): Promise<void> {
  await Promise.all([...live].map(async (child) => await stop(child)))
}

export const stop = stopProcess

export function track (child: ChildProcess): ChildProcess {
  live.add(child)
  child.once('exit', () => live.delete(child))
  return child
}

/** A long-running bench/<script> under tsx that prints one JSON line when ready (ceiling-http.ts). */
export async function startJsonServer<T> (script: string, arg: string): Promise<{ child: ChildProcess, ready: T }> {
  const child = track(spawn(process.execPath, ['--import', 'tsx', join(BENCH_DIR, script), arg], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit']
  }))
  let onExit: ((code: number | null) => void) | undefined
  const ready = await new Promise<T>((resolve, reject) => {
    let out = ''
    onExit = (code) => reject(new Error(`${script} exited with ${String(code)} before it was ready`))
    child.once('exit', onExit)
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d
      const nl = out.indexOf('\n')
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as T)
    })
  })
  if (onExit !== undefined) child.removeListener('exit', onExit)
  return { child, ready }
}

export interface Service {
  child: ChildProcess
  pid: number
  url: string
  name: string
  /** The PostgreSQL database it uses (its backends' CPU counts as its own), or undefined on PGlite. */
  databaseName: string | undefined
}

/** Where the service keeps its data: a PostgreSQL URL, or the embedded PGlite in a directory. */
export type Storage = { databaseUrl: string } | { dataDir: string }

/** The arguments of package.json's `start` after `node`, so the bench runs exactly that. */
export function productionStartArgs (): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
  // `exec` makes npm's shell hand signals to node (D47); the bench spawns node itself.
  const [command, ...args] = pkg.scripts.start.trim().replace(/^exec\s+/, '').split(/\s+/)
  if (command !== 'node') throw new Error(`package.json start is not a plain node command: ${pkg.scripts.start}`)
  return args
}

export async function startService (name: string, storage: Storage, redisUrl?: string): Promise<Service> {
  const env: NodeJS.ProcessEnv = { ...process.env, INGEST_TOKEN, TRUST_PROXY: 'true' }
  delete env.LOG_LEVEL // D45 the default level a user gets
  delete env.DATABASE_URL
  delete env.DATA_DIR
  delete env.METRICS_TOKEN // the bench reads /metrics (heap, read-cache counters)
  if ('databaseUrl' in storage) env.DATABASE_URL = storage.databaseUrl
  else env.DATA_DIR = storage.dataDir
  // The single-service runs measure the in-memory limiter whatever the caller's shell exports.
  if (redisUrl === undefined) delete env.REDIS_URL
  else env.REDIS_URL = redisUrl
  // BENCH_SERVICE_NODE_ARGS: V8 settings to try on the service alone, before the start's own.
  const extra = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')
  const server = await startServer({
    args: [...extra, ...productionStartArgs()],
    cwd: ROOT,
    env,
    onLine: (line) => process.stderr.write(`[${name}] ${line}\n`)
  })
  track(server.child)
  const databaseName = 'databaseUrl' in storage ? new URL(storage.databaseUrl).pathname.slice(1) : undefined
  return { child: server.child, pid: server.pid, url: server.url, name, databaseName }
}

let runnerRequests = 0
/** The runner's own requests come from 172.16.0.0/12, apart from the load's 10.0.0.0/8 and its allowance. */
export function runnerAddress (): string {
  const n = runnerRequests++
  return `172.${16 + ((n >>> 16) & 15)}.${(n >>> 8) & 255}.${n & 255}`
}
