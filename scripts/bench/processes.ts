import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url))
export const ROOT = join(BENCH_DIR, '..', '..')
export const INGEST_TOKEN = 'bench-token'

/** Every child still running, so a failure or Ctrl-C can stop them all (by pid, nothing else). */
const live = new Set<ChildProcess>()

export async function stopAll (): Promise<void> {
  await Promise.all([...live].map(async (child) => await stop(child)))
}

/** SIGTERM, then SIGKILL after `graceMs`: the service drains in-flight requests first. */
export async function stop (child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

function track (child: ChildProcess): ChildProcess {
  live.add(child)
  child.once('exit', () => live.delete(child))
  return child
}

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

/** Runs scripts/bench/<script> under tsx with one JSON argument; resolves its last stdout line. */
export async function runJsonChild<T> (script: string, arg: unknown): Promise<T> {
  const child = track(spawn(process.execPath, ['--import', 'tsx', join(BENCH_DIR, script), JSON.stringify(arg)], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit']
  }))
  let out = ''
  child.stdout?.setEncoding('utf8').on('data', (d: string) => { out += d })
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  if (code !== 0) throw new Error(`${script} exited with ${String(code)}`)
  const last = out.trim().split('\n').pop() ?? ''
  return JSON.parse(last) as T
}

/** A long-running child that prints one JSON line when ready (ceiling-http.ts). */
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
}

/** The arguments of package.json's `start` after `node`, so the bench runs exactly that. */
export function productionStartArgs (): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
  const [command, ...args] = pkg.scripts.start.trim().split(/\s+/)
  if (command !== 'node') throw new Error(`package.json start is not a plain node command: ${pkg.scripts.start}`)
  return args
}

/** The production start (`npm start` without its build step) with the bench's environment. */
export async function startService (name: string, databaseUrl: string, redisUrl?: string): Promise<Service> {
  const port = await freePort()
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    INGEST_TOKEN,
    TRUST_PROXY: 'true'
  }
  // The single-service runs measure the in-memory limiter whatever the caller's shell exports.
  if (redisUrl === undefined) delete env.REDIS_URL
  else env.REDIS_URL = redisUrl
  // BENCH_SERVICE_NODE_ARGS: V8 settings to try on the service alone, before the start's own.
  const extra = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')
  const child = track(spawn(process.execPath, [...extra, ...productionStartArgs()], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }))
  const tail: string[] = []
  const relay = (d: string): void => {
    for (const line of d.split('\n')) {
      if (line.trim() === '') continue
      tail.push(line)
      if (tail.length > 30) tail.shift()
      process.stderr.write(`[${name}] ${line}\n`)
    }
  }
  child.stdout?.setEncoding('utf8').on('data', relay)
  child.stderr?.setEncoding('utf8').on('data', relay)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000 // migrations run at start
  while (true) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${tail.join('\n')}`)
    const health = await rawGet(`${url}/v1/health`).catch(() => undefined)
    if (health?.status === 200) break
    if (Date.now() > deadline) throw new Error(`${name} not healthy after 60 s:\n${tail.join('\n')}`)
    await sleep(200)
  }
  return { child, pid: child.pid as number, url, name }
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

export interface RawResponse { status: number, headers: Record<string, string>, body: Buffer }

/** node:http rather than fetch: fetch would decompress gzip, and we need the bytes as sent. */
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

let runnerRequests = 0
/**
 * The runner's own requests (variant fetches, uploads, polls) come from 172.16.0.0/12, apart from
 * the load's 10.0.0.0/8, so they never use up an address's 60/min allowance either.
 */
export function runnerAddress (): string {
  const n = runnerRequests++
  return `172.${16 + ((n >>> 16) & 15)}.${(n >>> 8) & 255}.${n & 255}`
}
