import { randomBytes } from 'node:crypto'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { freePort, startServer, type ServerProcess } from '../support/processes.js'
// @ts-expect-error plain JavaScript, loaded by tap's node-arg before each test file
import { running } from '../support/fixtures-per-process.mjs'

/**
 * Real processes for the scale-out tests: the service started as `npm start` would run it (from
 * source through tsx, so no build is needed), a throw-away PostgreSQL database, and a TCP proxy
 * that can be cut and restored between the service and PostgreSQL.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SERVER = fileURLToPath(new URL('../../src/server.ts', import.meta.url))

export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? ''
export { TEST_REDIS_URL } from '../services.js'
export { freePort, outputMatching, sleep } from '../support/processes.js'

export interface ThrowAwayDatabase { url: string, port: number, drop: () => Promise<void> }

/** A new database on the TEST_DATABASE_URL server, dropped (with its connections) by drop(). */
export async function createDatabase (): Promise<ThrowAwayDatabase> {
  const name = `${DATABASE_PREFIX}${process.pid}_${randomBytes(3).toString('hex')}`
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
  await dropLeftBehind(admin)
  await admin.unsafe(`CREATE DATABASE ${name}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    port: Number(url.port === '' ? 5432 : url.port),
    drop: async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    }
  }
}

/** Each database is named for the test process that made it, so one whose process is gone can be told. */
const DATABASE_PREFIX = 'fuel_rep_'

/**
 * Drops the databases of test processes that are gone: tap kills a file that outruns its timeout
 * before its teardown runs, and its database would stay on the server for good.
 */
async function dropLeftBehind (admin: postgres.Sql): Promise<void> {
  const rows = await admin<Array<{ datname: string }>>`SELECT datname FROM pg_database WHERE starts_with(datname, ${DATABASE_PREFIX})`
  for (const { datname } of rows) {
    const pid = new RegExp(`^${DATABASE_PREFIX}(\\d+)_[0-9a-f]+$`).exec(datname)?.[1]
    if (pid !== undefined && !(running(Number(pid)) as boolean)) await admin.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
  }
}

export type ServiceProcess = ServerProcess

/** Starts `src/server.ts` with the environment given and waits for /v1/health to answer 200. */
export async function startService (env: Record<string, string>): Promise<ServiceProcess> {
  return await startServer({
    args: ['--import', 'tsx', SERVER],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env }
  })
}

/** Starts a service for each environment, all or none: when one fails, those started are stopped before its error is thrown. */
export async function startServices (envs: Array<Record<string, string>>): Promise<ServiceProcess[]> {
  const started = await Promise.allSettled(envs.map(startService))
  const failure = started.find((r) => r.status === 'rejected')
  if (failure === undefined) return started.map((r) => (r as PromiseFulfilledResult<ServiceProcess>).value)
  await Promise.all(started.map(async (r) => { if (r.status === 'fulfilled') await r.value.stop() }))
  throw failure.reason
}

/**
 * A TCP proxy to a target port that can drop every connection and refuse new ones, then recover,
 * and can hold what the target sends for a while (a replica that reads its database late).
 */
export class CuttableProxy {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  port = 0
  /** Milliseconds every chunk from the target is held before the client gets it, in order. */
  delayMs = 0

  constructor (private readonly targetPort: number, private readonly targetHost = '127.0.0.1') {}

  async start (): Promise<void> {
    this.port = this.port === 0 ? await freePort() : this.port
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost)
      for (const s of [client, upstream]) {
        this.sockets.add(s)
        s.on('close', () => this.sockets.delete(s))
        s.on('error', () => { client.destroy(); upstream.destroy() })
      }
      client.pipe(upstream)
      // Chunks from the target wait in order, each until its time (now + delayMs when it came).
      const held: Array<{ at: number, chunk: Buffer | null }> = []
      let timer: NodeJS.Timeout | undefined
      const release = (): void => {
        timer = undefined
        while (held.length > 0 && (held[0]?.at ?? 0) <= Date.now()) {
          const { chunk } = held.shift() as { chunk: Buffer | null }
          if (chunk === null) client.end()
          else client.write(chunk)
        }
        if (held.length > 0) timer = setTimeout(release, (held[0]?.at ?? 0) - Date.now())
      }
      const hold = (chunk: Buffer | null): void => {
        held.push({ at: Date.now() + this.delayMs, chunk })
        if (timer === undefined) release()
      }
      upstream.on('data', hold)
      upstream.on('end', () => { hold(null) })
    })
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve))
  }

  /** The database "goes away": open connections drop, new ones are refused. */
  async cut (): Promise<void> {
    const server = this.server
    this.server = undefined
    for (const s of this.sockets) s.destroy()
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  async restore (): Promise<void> {
    await this.start()
  }

  async close (): Promise<void> {
    await this.cut()
  }
}

/** Multipart body for POST /v1/ingest/csv. */
export function csvForm (csv: string): FormData {
  const form = new FormData()
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'cycle.csv')
  return form
}

/** Where an armed FaultProxy strikes: `afterBytes` past the marker, or at the message after it. */
export interface FaultPoint { afterBytes?: number, nextMessage?: boolean }

/**
 * A TCP proxy to PostgreSQL that watches what the service sends: once armed, the first client
 * message containing `marker` (or the bytes or message after it: inside a COPY, or postgres.js's
 * prepared COMMIT, whose text is sent only once per connection) is held back and `fault` runs
 * (terminating the backends), so a connection is lost in exactly that phase.
 */
export class FaultProxy {
  private server: Server | undefined
  private armed: { marker: string, point: FaultPoint, fault: () => Promise<void>, hit: () => void } | undefined
  private readonly sockets = new Set<Socket>()
  port = 0

  constructor (private readonly targetPort: number, private readonly targetHost = '127.0.0.1') {}

  async start (): Promise<void> {
    this.port = await freePort()
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost)
      const close = (): void => { client.destroy(); upstream.destroy() }
      for (const s of [client, upstream]) { this.sockets.add(s); s.on('close', () => this.sockets.delete(s)) }
      client.on('error', close)
      upstream.on('error', close)
      client.on('close', close)
      upstream.on('close', close)
      upstream.on('data', (chunk: Buffer) => client.write(chunk))
      let tail = ''
      let seen = -1 // bytes sent since the marker, once it has been seen
      client.on('data', (chunk: Buffer) => {
        const armed = this.armed
        if (armed !== undefined) {
          let strike = false
          if (seen < 0) {
            const text = tail + chunk.toString('latin1')
            if (text.includes(armed.marker)) seen = 0
            tail = text.slice(-armed.marker.length)
            strike = seen === 0 && armed.point.nextMessage !== true && (armed.point.afterBytes ?? 0) === 0
          } else {
            seen += chunk.length
            strike = armed.point.nextMessage === true || seen >= (armed.point.afterBytes ?? 0)
          }
          if (strike) {
            this.armed = undefined
            client.pause()
            void armed.fault().finally(() => { armed.hit(); setTimeout(close, 2000).unref() })
            return
          }
        }
        upstream.write(chunk)
      })
    })
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve))
  }

  /** Resolves once a message with `marker` has been caught and `fault` has run. */
  async arm (marker: string, fault: () => Promise<void>, point: FaultPoint = {}): Promise<void> {
    await new Promise<void>((resolve) => { this.armed = { marker, point, fault, hit: resolve } })
  }

  disarm (): void { this.armed = undefined }

  async close (): Promise<void> {
    const server = this.server
    this.server = undefined
    for (const s of this.sockets) s.destroy()
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
