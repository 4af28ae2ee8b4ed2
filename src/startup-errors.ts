import { ConfigError, type Config } from './config.js'
import { DataDirInUseError, DataDirUnwritableError } from './db/data-dir-lock.js'

export type StartupContext = Pick<Config, 'host' | 'port' | 'databaseUrl' | 'dataDir'>

/** Each plugin may take this long at start, as a first PGlite start runs initdb. */
export const PLUGIN_TIMEOUT_MS = 120_000

interface ErrorFields extends NodeJS.ErrnoException {
  address?: string
  port?: number
  severity?: string
}

/** A failed start is one `Cannot start:` line naming the setting to fix, no stack or JSON. */
export function startupErrorLine (err: unknown, context: StartupContext): string {
  if (err instanceof ConfigError) return err.message
  const chain = causes(err)
  for (const e of chain) {
    const line = knownLine(e, context)
    if (line !== undefined) return line
  }
  const message = err instanceof Error ? err.message : String(err)
  return oneLine(`Cannot start: ${message}`)
}

function knownLine (e: ErrorFields, context: StartupContext): string | undefined {
  if (e instanceof DataDirInUseError) {
    return `Cannot start: DATA_DIR ${e.dataDir} is in use by another running instance of the service (pid ${e.pid}); stop it or set another DATA_DIR`
  }
  if (e instanceof DataDirUnwritableError) {
    return `Cannot start: DATA_DIR ${e.dataDir} is not writable (${e.code}); fix its permissions or set another DATA_DIR`
  }
  const database = context.databaseUrl === undefined ? undefined : describeDatabase(context.databaseUrl)
  if (database !== undefined && e.name === 'PostgresError') {
    if (e.code === '3D000') return `Cannot start: database "${database.name}" does not exist on the PostgreSQL server at ${database.server} (DATABASE_URL)`
    if (e.code === '28P01' || e.code === '28000') return `Cannot start: PostgreSQL at ${database.server} refused the login of user "${database.user}": ${e.message} (DATABASE_URL)`
    return `Cannot start: PostgreSQL at ${database.server} answered ${e.code ?? 'an error'}: ${oneLine(e.message)} (DATABASE_URL)`
  }
  if (e.syscall === 'listen') {
    const where = `${context.host}:${context.port}`
    if (e.code === 'EADDRINUSE') return `Cannot start: port ${context.port} is already in use on ${context.host} (PORT, HOST)`
    if (e.code === 'EACCES') return `Cannot start: not permitted to listen on ${where} (ports below 1024 need privileges; PORT)`
    if (e.code === 'EADDRNOTAVAIL') return `Cannot start: ${context.host} is not an address of this machine (HOST)`
    return `Cannot start: cannot listen on ${where} (${e.code ?? e.message})`
  }
  if (database !== undefined && ['ECONNREFUSED', 'CONNECT_TIMEOUT', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET'].includes(e.code ?? '')) {
    return `Cannot start: the PostgreSQL server at ${database.server} is not reachable (${e.code ?? ''}); check DATABASE_URL and that PostgreSQL is running`
  }
  if (database !== undefined && (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN')) {
    return `Cannot start: the PostgreSQL host ${database.host} cannot be resolved (${e.code}); check DATABASE_URL`
  }
  if (e.code === 'FST_ERR_PLUGIN_TIMEOUT') {
    return `Cannot start: a part of the service did not finish starting within ${PLUGIN_TIMEOUT_MS / 1000} s (${oneLine(e.message)})`
  }
  return undefined
}

/** The error and its causes, outermost first (Fastify and postgres.js may wrap). */
function causes (err: unknown): ErrorFields[] {
  const chain: ErrorFields[] = []
  let current: unknown = err
  while (current instanceof Error && chain.length < 10 && !chain.includes(current)) {
    chain.push(current)
    current = current.cause
  }
  return chain
}

/** Server, database name and user of a DATABASE_URL; the password never appears. */
function describeDatabase (url: string): { server: string, host: string, name: string, user: string } | undefined {
  try {
    const u = new URL(url)
    const host = u.hostname === '' ? 'localhost' : u.hostname
    const name = decodeURIComponent(u.pathname.replace(/^\//, ''))
    const user = decodeURIComponent(u.username)
    return { server: `${host}:${u.port === '' ? '5432' : u.port}`, host, name: name === '' ? user : name, user }
  } catch {
    return undefined
  }
}

function oneLine (text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim()
}
