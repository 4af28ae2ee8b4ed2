import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { serverArgs } from '../support/dist.js'
import { seedDataDir } from '../support/pglite-template.js'
import { listeningUrl, outputMatching, rawGet } from '../support/processes.js'
import { startOnTerminal, type TerminalProcess } from '../support/pty.js'

/**
 * The server on a real pseudo-terminal: its log lines as a terminal shows them (terminal-logs), and
 * D60's terminal that the test closes under it (lost-terminal*.test.ts), where on Node 20 both log
 * modes used to end in a process that spun at full CPU and ignored SIGTERM.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Ample for a start with migrations and a clean shutdown on a loaded 2-core machine; a spinning process never gets there. */
export const EXIT_BUDGET_MS = 30_000

export type Mode = 'json' | 'pretty'

/** JSON lines in production; pino-pretty's lines at a terminal outside it. */
const MODE_ENV: Record<Mode, NodeJS.ProcessEnv> = {
  json: { NODE_ENV: 'production', INGEST_TOKEN: 'lost-terminal-token-0123456789abcdef' },
  pretty: { NODE_ENV: 'development' }
}
const LISTENING: Record<Mode, RegExp> = {
  json: /\{"level":30,.*"msg":"Server listening at http:\/\/127\.0\.0\.1:\d+"\}/,
  pretty: /\[\d{2}:\d{2}:\d{2}\] .*INFO.*: .*Server listening at http:\/\/127\.0\.0\.1:\d+/
}

export async function serverOnTerminal (t: Test, mode: Mode, controlling: boolean): Promise<{ server: TerminalProcess, url: string }> {
  // An existing database: the start is what `npm start` does on a restart, with no initdb first.
  const dataDir = await seedDataDir(join(t.testdir(), 'data'))
  const server = await startOnTerminal({
    command: [process.execPath, ...await serverArgs()],
    cwd: ROOT,
    controlling,
    // debug: every request writes an access line, so the lost terminal is written to after it went
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'debug', ...MODE_ENV[mode] }
  })
  t.teardown(server.kill)
  const output = await outputMatching(server, LISTENING[mode])
  t.match(output, LISTENING[mode], `${mode} lines at the terminal`)
  const url = listeningUrl(output) as string
  t.equal((await rawGet(`${url}/v1/health`)).status, 200)
  return { server, url }
}

/** The exit code, or 'still running' once the budget is spent. */
export async function exitWithin (server: TerminalProcess, ms: number): Promise<number | 'still running'> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'still running'>((resolve) => { timer = setTimeout(() => resolve('still running'), ms) })
  const code = await Promise.race([server.exited, late])
  clearTimeout(timer)
  return code
}
