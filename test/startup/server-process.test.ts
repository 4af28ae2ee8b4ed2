import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import { needs, TEST_POSTGRES_URL } from '../services.js'
import { serverArgs } from '../support/dist.js'
import { seedDataDir } from '../support/pglite-template.js'

/** D33/D35: the server started as a real process, from dist/ as `npm start` runs it. */

interface Run { code: number | null, stderr: string, stdout: string }

async function runServer (env: Record<string, string>, cwd = fileURLToPath(new URL('../..', import.meta.url)), untilListening = false): Promise<Run> {
  const child = spawn(process.execPath, await serverArgs(), {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString()
    if (untilListening && stdout.includes('Server listening')) child.kill('SIGTERM')
  })
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  return { code, stderr, stdout }
}

function assertOneLine (t: Test, run: Run, expected: string): void {
  t.equal(run.code, 1, 'exit code 1')
  t.equal(run.stderr, `${expected}\n`, 'stderr is exactly one line')
  t.notMatch(run.stderr, /\n\s+at /, 'no stack trace')
}

async function busyPort (t: Test): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  return (server.address() as AddressInfo).port
}

t.test('[D33] the port already in use', async (t) => {
  const port = await busyPort(t)
  // An existing database, so the start reaches the listen without an initdb first.
  const dataDir = await seedDataDir(join(t.testdir(), 'data'))
  assertOneLine(t, await runServer({ PORT: String(port), DATA_DIR: dataDir }), `Cannot start: port ${port} is already in use on 127.0.0.1 (PORT, HOST)`)
})

t.test('[D33] a DATA_DIR that cannot be created', async (t) => {
  const dir = t.testdir()
  writeFileSync(join(dir, 'file'), '')
  const dataDir = join(dir, 'file', 'data')
  assertOneLine(t, await runServer({ PORT: '0', DATA_DIR: dataDir }), `Cannot start: DATA_DIR ${dataDir} is not writable (ENOTDIR); fix its permissions or set another DATA_DIR`)
})

t.test('[D33] a DATA_DIR held by a running process', async (t) => {
  const dir = t.testdir()
  // This test process is alive: its pid in the lock file is another running instance.
  writeFileSync(join(dir, 'fuel-price-service.lock'), `${process.pid}\n`)
  assertOneLine(t, await runServer({ PORT: '0', DATA_DIR: dir }), `Cannot start: DATA_DIR ${dir} is in use by another running instance of the service (pid ${process.pid}); stop it or set another DATA_DIR`)
})

t.test('[D33] an unreachable PostgreSQL server', async (t) => {
  assertOneLine(t, await runServer({ PORT: '0', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/fuel' }), 'Cannot start: the PostgreSQL server at 127.0.0.1:1 is not reachable (ECONNREFUSED); check DATABASE_URL and that PostgreSQL is running')
})

t.test('[D33] a database that does not exist', await needs('postgres'), async (t) => {
  const url = new URL(TEST_POSTGRES_URL)
  url.pathname = '/fuel_d33_no_such_database'
  assertOneLine(t, await runServer({ PORT: '0', DATABASE_URL: url.toString() }), `Cannot start: database "fuel_d33_no_such_database" does not exist on the PostgreSQL server at ${url.hostname}:${url.port === '' ? '5432' : url.port} (DATABASE_URL)`)
})

t.test('[D35] .env in the working directory is read; the environment wins', async (t) => {
  const dir = t.testdir()
  const port = await busyPort(t)
  await seedDataDir(join(dir, 'data')) // an existing database: three starts without an initdb
  writeFileSync(join(dir, '.env'), `PORT=${port}\nDATA_DIR=${join(dir, 'data')}\n`)
  // PORT from .env is the busy port: the start fails naming it.
  assertOneLine(t, await runServer({}, dir), `Cannot start: port ${port} is already in use on 127.0.0.1 (PORT, HOST)`)
  // PORT=0 in the environment overrides the file: the server starts (and is stopped).
  const run = await runServer({ PORT: '0' }, dir, true)
  t.equal(run.stderr, '')
  t.match(run.stdout, /Server listening at http:\/\/127\.0\.0\.1:\d+/)
  // D50 through the real start: the line shows even when silent.
  const silent = await runServer({ PORT: '0', LOG_LEVEL: 'silent' }, dir, true)
  t.equal(silent.stderr, '')
  t.match(silent.stdout, /^\{"level":30,"time":\d+,"pid":\d+,"hostname":"[^"]*","msg":"Server listening at http:\/\/127\.0\.0\.1:\d+"\}\n$/, 'only the start line')
})
