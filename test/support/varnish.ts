import { spawn, execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freePort, rawGet, sleep } from './processes.js'

/**
 * Debian's Varnish running the repository's deploy/varnish/default.vcl in front of replicas, for
 * the shared-cache test (test/replicas/shared-cache.test.ts) and the bench's cache row: a child
 * process on a free port with a working directory of its own, removed when it stops.
 */
export const VARNISHD_PATH = process.env.VARNISHD_PATH !== undefined && process.env.VARNISHD_PATH !== ''
  ? process.env.VARNISHD_PATH
  : '/usr/sbin/varnishd'

export const DEPLOY_VCL = fileURLToPath(new URL('../../deploy/varnish/default.vcl', import.meta.url))

/** The VCL with its one backend (`replica_1`, port 8000) replaced by one per port given. */
export function vclFor (ports: readonly number[], vcl = readFileSync(DEPLOY_VCL, 'utf8')): string {
  const backend = /^backend replica_1 \{\n[\s\S]*?\n\}\n/m.exec(vcl)?.[0]
  const add = '    replicas.add_backend(replica_1);\n'
  if (backend?.includes('.port = "8000";') !== true || !vcl.includes(add)) {
    throw new Error(`${DEPLOY_VCL} no longer has the one backend replica_1 on port 8000 that tests rewrite`)
  }
  const name = (i: number): string => `replica_${i + 1}`
  return vcl
    .replace(backend, ports.map((port, i) => backend.replace('replica_1', name(i)).replace('"8000"', `"${port}"`)).join('\n'))
    .replace(add, ports.map((_, i) => add.replace('replica_1', name(i))).join(''))
}

export interface VarnishProcess {
  /** http://127.0.0.1:<port> */
  url: string
  port: number
  /** Everything varnishd wrote. */
  output: () => string
  /** varnishstat's counters by name (`MAIN.cache_hit`, …). */
  counters: () => Promise<Record<string, number>>
  /** The manager's pid and its cache process's (the one that serves), for their CPU time. */
  pids: () => number[]
  /** SIGTERM (its cache process stops with it), then its working directory is removed. */
  stop: () => Promise<void>
}

export interface VarnishOptions {
  backendPorts: readonly number[]
  /** varnishd's environment besides PATH (the VCL reads CACHE_PURGE_TOKEN from it). */
  env?: Record<string, string>
  port?: number
  /** Cache storage, `-s malloc,<size>`. */
  storage?: string
}

/** Starts varnishd in the foreground and waits until /v1/health answers 200 through it. */
export async function startVarnish (options: VarnishOptions): Promise<VarnishProcess> {
  const port = options.port ?? await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'fuel-varnish-'))
  // Run as root, varnishd drops to its own users, which must reach the working directory.
  chmodSync(dir, 0o755)
  const vcl = join(dir, 'default.vcl')
  writeFileSync(vcl, vclFor(options.backendPorts), { mode: 0o644 })
  const workdir = join(dir, 'n')
  const child = spawn(VARNISHD_PATH, [
    '-F', '-n', workdir, '-a', `127.0.0.1:${port}`, '-T', 'none', '-f', vcl,
    '-s', `malloc,${options.storage ?? '64m'}`, '-p', 'thread_pools=1', '-p', 'thread_pool_min=10'
  ], { env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  child.stdout.on('data', (d: Buffer) => { log += d.toString() })
  child.stderr.on('data', (d: Buffer) => { log += d.toString() })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    }
    rmSync(dir, { recursive: true, force: true })
  }
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) {
      await stop()
      throw new Error(`varnishd exited with ${child.exitCode} during start:\n${log.slice(-3000)}`)
    }
    // 200 once the health probe has found a replica up.
    const health = await rawGet(`${url}/v1/health`).catch(() => undefined)
    if (health?.status === 200) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`varnishd not serving in time:\n${log.slice(-3000)}`)
    }
    await sleep(100)
  }
  const counters = async (): Promise<Record<string, number>> => {
    const { stdout } = await promisify(execFile)('varnishstat', ['-n', workdir, '-1', '-j'])
    const json = JSON.parse(stdout) as { counters?: Record<string, { value: number }> }
    return Object.fromEntries(Object.entries(json.counters ?? {}).map(([name, c]) => [name, c.value]))
  }
  const pids = (): number[] => {
    const manager = child.pid as number
    try {
      return [manager, ...readFileSync(`/proc/${manager}/task/${manager}/children`, 'utf8').trim().split(/\s+/).filter((p) => p !== '').map(Number)]
    } catch {
      return [manager]
    }
  }
  return { url, port, output: () => log, counters, pids, stop }
}
