import { spawnSync } from 'node:child_process'
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import net from 'node:net'
import tls from 'node:tls'
import t from './support/file-test.js'
import { paced } from './support/pace.js'
import { VARNISHD_PATH } from './support/varnish.js'

/**
 * The outside services a few test files need (Redis, Chromium, PostgreSQL, Varnish, a
 * pseudo-terminal, a tmpfs to fill), found or not within 2 s, so `npm test` on a machine with only
 * Node skips those tests with a one-line reason instead of waiting for tap's timeout (D34). Under REQUIRE_SERVICES=1 (.ci/run) a missing service is a
 * failure of the file, not a skip; the tests that need it are still skipped, so nothing hangs.
 */
export const TEST_REDIS_URL = nonEmpty(process.env.TEST_REDIS_URL) ?? 'redis://127.0.0.1:6379'
export const CHROMIUM_PATH = nonEmpty(process.env.CHROMIUM_PATH) ?? '/usr/bin/chromium'
export const PYTHON = nonEmpty(process.env.PYTHON) ?? 'python3'
export const REQUIRE_SERVICES = process.env.REQUIRE_SERVICES === '1'

/**
 * 2 s on a laptop, where a missing service must be found quickly; under REQUIRE_SERVICES=1 the
 * services are there by definition, and a loaded CI machine may take longer than 2 s to answer a
 * first PING: a late answer there is not a missing service (D34).
 */
const PROBE_TIMEOUT_MS = REQUIRE_SERVICES ? paced(15_000) : 2000

export type Service = 'redis' | 'chromium' | 'postgres' | 'varnishd' | 'pty' | 'tmpfs'

/**
 * Calls `expire` once `timeoutMs` have passed in at least ten turns of the event loop, and returns
 * the function that cancels it. A plain timer lost to a busy test file: one that held the loop
 * for 2.5 s (the memory store's own tests) let the probe's timer fire in the same turn the PONG
 * was waiting to be read, and a running Redis was reported missing. A held loop now costs the
 * probe one turn, not its whole allowance.
 */
function afterLoopTime (timeoutMs: number, expire: () => void): () => void {
  const turns = 10
  const started = Date.now()
  let seen = 0
  const timer = setInterval(() => {
    seen++
    if (seen >= turns && Date.now() - started >= timeoutMs) {
      clearInterval(timer)
      expire()
    }
  }, timeoutMs / turns)
  return () => clearInterval(timer)
}

/** Why Redis cannot be used (undefined when it answers PING within the timeout). */
export async function redisUnavailable (url = TEST_REDIS_URL, timeoutMs = PROBE_TIMEOUT_MS): Promise<string | undefined> {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return `TEST_REDIS_URL is not a URL: ${url}`
  }
  const host = target.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1'
  const port = Number(target.port === '' ? 6379 : target.port)
  const commands: string[][] = []
  if (target.password !== '') {
    commands.push(target.username !== '' ? ['AUTH', decodeURIComponent(target.username), decodeURIComponent(target.password)] : ['AUTH', decodeURIComponent(target.password)])
  }
  commands.push(['PING'])
  return await new Promise((resolve) => {
    const socket = target.protocol === 'rediss:' ? tls.connect({ host, port, servername: host }) : net.connect({ host, port })
    let answer = ''
    const finish = (reason: string | undefined): void => {
      stop()
      socket.destroy()
      resolve(reason)
    }
    const stop = afterLoopTime(timeoutMs, () => finish(`Redis at ${host}:${port} did not answer PING within ${timeoutMs} ms`))
    socket.once(target.protocol === 'rediss:' ? 'secureConnect' : 'connect', () => {
      socket.write(commands.map(resp).join(''))
    })
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1')
      const lines = answer.split('\r\n').slice(0, -1) // complete lines only
      const error = lines.find((line) => line.startsWith('-'))
      if (error !== undefined) finish(`Redis at ${host}:${port} refused: ${error.slice(1)}`)
      else if (lines.includes('+PONG')) finish(undefined)
    })
    socket.once('error', (err: NodeJS.ErrnoException) => finish(`Redis is not reachable at ${host}:${port} (${err.code ?? err.message})`))
  })
}

/** Why Chromium cannot be used (undefined when the executable is there). */
export function chromiumUnavailable (path = CHROMIUM_PATH): string | undefined {
  try {
    accessSync(path, constants.X_OK)
    return undefined
  } catch {
    return `Chromium not found at ${path} (set CHROMIUM_PATH)`
  }
}

/** Why Varnish cannot be used (undefined when varnishd is there). */
export function varnishdUnavailable (path = VARNISHD_PATH): string | undefined {
  try {
    accessSync(path, constants.X_OK)
    return undefined
  } catch {
    return `varnishd not found at ${path} (apt-get install varnish, or set VARNISHD_PATH)`
  }
}

/**
 * A PostgreSQL server for the few tests that need one even on the PGlite pass (a start-up
 * failure naming a missing database, D33): TEST_DATABASE_URL's server, else the local default.
 */
export const TEST_POSTGRES_URL = nonEmpty(process.env.TEST_DATABASE_URL) ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** Why PostgreSQL cannot be used (undefined when its port accepts a connection within the timeout). */
export async function postgresUnavailable (url = TEST_POSTGRES_URL, timeoutMs = PROBE_TIMEOUT_MS): Promise<string | undefined> {
  const target = new URL(url)
  const host = target.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1'
  const port = Number(target.port === '' ? 5432 : target.port)
  return await new Promise((resolve) => {
    const socket = net.connect({ host, port })
    const finish = (reason: string | undefined): void => {
      stop()
      socket.destroy()
      resolve(reason)
    }
    const stop = afterLoopTime(timeoutMs, () => finish(`PostgreSQL at ${host}:${port} did not accept a connection within ${timeoutMs} ms`))
    socket.once('connect', () => finish(undefined))
    socket.once('error', (err: NodeJS.ErrnoException) => finish(`PostgreSQL is not reachable at ${host}:${port} (${err.code ?? err.message})`))
  })
}

/** A local program that is missing fails at once; one that is there may start slowly on a loaded machine. */
const LOCAL_PROBE_TIMEOUT_MS = 15_000

/** Why no pseudo-terminal can be made (Node has none of its own; python3's `pty` module gives one). */
export function ptyUnavailable (python = PYTHON): string | undefined {
  const probe = spawnSync(python, ['-c', 'import os, pty; os.openpty()'], { encoding: 'utf8', timeout: LOCAL_PROBE_TIMEOUT_MS })
  if ((probe.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return `${python} not found to give a process a pseudo-terminal (set PYTHON)`
  if (probe.error !== undefined) return `${python} did not open a pseudo-terminal: ${probe.error.message}`
  return probe.status === 0 ? undefined : `${python} cannot open a pseudo-terminal: ${probe.stderr.trim().split('\n').pop() ?? ''}`
}

/** Why no small file system can be mounted to fill up (a tmpfs needs root: `mount -t tmpfs`). */
export function tmpfsUnavailable (): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: a tmpfs to fill up cannot be mounted (mount -t tmpfs needs root)'
  const dir = mkdtempSync(join(tmpdir(), 'fuel-tmpfs-probe-'))
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { encoding: 'utf8', timeout: LOCAL_PROBE_TIMEOUT_MS })
    if (mounted.error !== undefined || mounted.status !== 0) return `mount -t tmpfs failed: ${(mounted.stderr ?? mounted.error?.message ?? '').trim()}`
    spawnSync('umount', [dir])
    return undefined
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const probes = new Map<Service, Promise<string | undefined>>()

/** The reason a service is missing, probed once per test process. */
export async function unavailable (service: Service): Promise<string | undefined> {
  let probe = probes.get(service)
  if (probe === undefined) {
    probe = service === 'redis'
      ? redisUnavailable()
      : service === 'postgres'
        ? postgresUnavailable()
        : Promise.resolve(service === 'varnishd' ? varnishdUnavailable() : service === 'pty' ? ptyUnavailable() : service === 'tmpfs' ? tmpfsUnavailable() : chromiumUnavailable())
    probes.set(service, probe)
  }
  return await probe
}

const reported = new Set<Service>()

/**
 * tap options for a test that needs these services: `{ skip: false }` when all are there, else
 * `{ skip: '<reason>' }`. Under REQUIRE_SERVICES=1 a missing service also fails the file (once).
 *
 *     t.test('needs Redis', await needs('redis'), async (t) => { ... })
 */
export async function needs (...services: Service[]): Promise<{ skip: string | false }> {
  for (const service of services) {
    const reason = await unavailable(service)
    if (reason === undefined) continue
    if (REQUIRE_SERVICES && !reported.has(service)) {
      reported.add(service)
      t.fail(`REQUIRE_SERVICES=1: ${reason}`)
    }
    return { skip: reason }
  }
  return { skip: false }
}

/** A Redis command in RESP, the protocol's array-of-bulk-strings form. */
function resp (args: string[]): string {
  return `*${args.length}\r\n` + args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')
}

function nonEmpty (value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}
