import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { paced } from './pace.js'

/**
 * Real processes, shared by the scale-out tests (test/replicas/_harness.ts) and the benchmark
 * (bench/): a free port, a server started and waited for, its stop, and what /proc says of it.
 */

export const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

/** Checks `check` every `stepMs` until it holds or `boundMs` (times the host's pace: the bound only
 * turns "never" into a failure) passes; says whether it held. The assertion after it says what was missing. */
export async function waitUntil (check: () => boolean, boundMs: number, stepMs = 100): Promise<boolean> {
  for (const until = Date.now() + paced(boundMs); !check(); await sleep(stepMs)) if (Date.now() >= until) return false
  return true
}

/** A process's output once it matches `pattern` (the event awaited), or as it is after the bound. */
export async function outputMatching (process: { output: () => string }, pattern: RegExp, boundMs = 90_000): Promise<string> {
  await waitUntil(() => pattern.test(process.output()), boundMs)
  return process.output()
}

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}

export interface ServerProcess {
  url: string
  pid: number
  child: ChildProcess
  /** Everything the process wrote (stdout and stderr), in order. */
  output: () => string
  /** Resolves with the exit code (null when killed by a signal) once the process has exited. */
  exited: Promise<number | null>
  /** Sends `signal` (SIGTERM by default) unless it has exited; resolves when it has. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

export interface ServerOptions {
  /** Arguments of `node` (the script and its flags). */
  args: string[]
  cwd: string
  /** The whole environment of the child; PORT and HOST are set here. */
  env: NodeJS.ProcessEnv
  /** Called with each output line (e.g. to relay it with a prefix). */
  onLine?: (line: string) => void
  /** Health path answered 200 once ready. */
  healthPath?: string
  timeoutMs?: number
}

/** The line the service writes once it listens, at every log level: the address it took. */
const LISTENING = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/

/**
 * The address a server started with PORT=0 reports in its output, once it has. A free port picked
 * beforehand and passed on could be taken by another test's server before this one binds it, whose
 * health would then answer for ours.
 */
export function listeningUrl (output: string): string | undefined {
  return LISTENING.exec(output)?.[1]
}

/**
 * The address a starting server reports in `output()`, once its health path answers 200 there;
 * undefined if `running()` turns false or `timeoutMs` (times the host's pace) passes first.
 */
export async function healthyUrl (output: () => string, running: () => boolean, timeoutMs: number, healthPath = '/v1/health'): Promise<string | undefined> {
  const deadline = Date.now() + paced(timeoutMs)
  let url: string | undefined
  while (running() && Date.now() <= deadline) {
    url ??= listeningUrl(output())
    const health = url === undefined ? undefined : await rawGet(`${url}${healthPath}`).catch(() => undefined)
    if (health?.status === 200) return url
    await sleep(200)
  }
  return undefined
}

/** The servers started here and still running, killed when this process exits. */
const liveServers = new Set<ChildProcess>()
let reaping = false

/**
 * A test process that ends before its teardown (an uncaught error in a file's top level, tap's
 * timeout) takes its servers with it: left running, they held the CPU of every later file (two
 * found an hour after a failed CI run, six minutes of CPU each).
 */
function reapAtExit (child: ChildProcess): void {
  liveServers.add(child)
  child.once('exit', () => liveServers.delete(child))
  if (reaping) return
  reaping = true
  process.once('exit', () => { for (const c of liveServers) c.kill('SIGKILL') })
}

/** Spawns a Node server on a port of 127.0.0.1 it picks itself and waits until its health path answers 200. */
export async function startServer (options: ServerOptions): Promise<ServerProcess> {
  let log = ''
  const child = spawn(process.execPath, options.args, {
    cwd: options.cwd,
    env: { ...options.env, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  reapAtExit(child)
  const take = (d: Buffer): void => {
    const text = d.toString()
    log += text
    if (options.onLine !== undefined) for (const line of text.split('\n')) if (line.trim() !== '') options.onLine(line)
  }
  child.stdout?.on('data', take)
  child.stderr?.on('data', take)
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    return await exited
  }
  // migrations run at start
  const url = await healthyUrl(() => log, () => child.exitCode === null, options.timeoutMs ?? 60_000, options.healthPath)
  if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} during start:\n${log.slice(-3000)}`)
  if (url === undefined) { await stop('SIGKILL'); throw new Error(`server not healthy in time:\n${log.slice(-3000)}`) }
  return { url, pid: child.pid as number, child, output: () => log, exited, stop }
}

/** SIGTERM, then SIGKILL after `graceMs` (times the host's pace): a service drains in-flight requests first. */
export async function stopProcess (child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), paced(graceMs))
  await exited
  clearTimeout(timer)
}

export interface Memory { rss: number, hwm: number }

/** VmRSS and VmHWM (peak) in bytes, from /proc: what the kernel charges the process. */
export function memory (pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') }
}

/** Resets VmHWM to the current RSS (Linux clear_refs 5), so a later peak is that phase's own. */
export function resetPeak (pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/** Clock ticks per second of /proc/<pid>/stat; 100 on every Linux the project runs on (USER_HZ). */
const CLOCK_TICKS = 100

/**
 * CPU seconds the process has used so far (utime + stime of /proc/<pid>/stat, all its threads),
 * or undefined once it has gone. Resolution: one clock tick (10 ms).
 */
export function cpuSeconds (pid: number): number | undefined {
  return statCpuSeconds(`/proc/${pid}/stat`)
}

/** CPU seconds of the main thread alone (where JavaScript runs), without V8's compiler and GC threads. */
export function mainThreadCpuSeconds (pid: number): number | undefined {
  return statCpuSeconds(`/proc/${pid}/task/${pid}/stat`)
}

function statCpuSeconds (path: string): number | undefined {
  try {
    const stat = readFileSync(path, 'utf8')
    // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return undefined
  }
}

export interface RawResponse { status: number, headers: Record<string, string>, body: Buffer }

/** node:http rather than fetch: fetch would decompress gzip, and the bytes as sent are wanted. */
export async function rawGet (url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return await new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const flat: Record<string, string> = {}
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v
        resolve({ status: res.statusCode ?? 0, headers: flat, body: Buffer.concat(chunks) })
      })
      res.on('error', reject)
    })
    req.setTimeout(30_000, () => req.destroy(new Error(`GET ${url}: no answer in 30 s`)))
    req.on('error', reject)
    req.end()
  })
}
