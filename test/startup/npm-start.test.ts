import { spawn } from 'node:child_process'
import { request } from 'node:http'
import { connect } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from '../support/file-test.js'
import { loadConfig } from '../../src/config.js'
import { lockDataDir } from '../../src/db/data-dir-lock.js'
import { SHUTDOWN_MARGIN_MS, shutdownDelayMs } from '../../src/shutdown.js'
import { HEADER } from '../fixtures/ingest.js'
import { SAMPLE_TOWNS } from '../fixtures/towns.js'
import { seedDataDir } from '../support/pglite-template.js'
import { healthyUrl, sleep } from '../support/processes.js'

/**
 * D47: `npm start` (the README's command, for replicas too) is stopped by a SIGTERM sent to the
 * npm process, as a process manager sends it: an upload in flight still completes, every line
 * logged is JSON, and then the port is free and DATA_DIR unlocked. How long the grace lasts
 * (REQUEST_TIMEOUT_MS and the margin, far past close-with-grace's own 10 s) is checked as
 * configuration, so the real upload here lasts about a second instead of half a minute.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TOKEN = 'npm-start-token'
const ROWS = 10
const ROW_GAP_MS = 100

const portRefuses = async (port: number): Promise<boolean> => await new Promise((resolve) => {
  const socket = connect(port, '127.0.0.1')
  socket.once('connect', () => { socket.destroy(); resolve(false) })
  socket.once('error', () => resolve(true))
})

t.test('[D47] the grace after SIGTERM: the whole request timeout, then 10 s to close the pools', async (t) => {
  t.equal(SHUTDOWN_MARGIN_MS, 10_000)
  t.equal(shutdownDelayMs(loadConfig({})), 130_000, 'default: 120 s of request timeout + 10 s')
  t.equal(shutdownDelayMs(loadConfig({ REQUEST_TIMEOUT_MS: '30000' })), 40_000, 'it follows REQUEST_TIMEOUT_MS')
})

t.test('SIGTERM to npm start: in-flight upload finishes, then port and DATA_DIR are released', async (t) => {
  // An existing database: the first start's initdb is tested elsewhere (test/db/pglite-memory).
  const dataDir = await seedDataDir(join(t.testdir(), 'data'))
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, INGEST_TOKEN: TOKEN, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  npm.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  npm.stderr.on('data', () => {})
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)))
  t.teardown(() => { if (npm.exitCode === null) npm.kill('SIGKILL') })
  // npm start may compile first (a fresh clone has no dist/): up to four minutes on a loaded machine.
  const listening = await healthyUrl(() => stdout, () => npm.exitCode === null, 240_000)
  const base = listening ?? 'http://127.0.0.1:0' // never listened: the requests below fail and say so

  // A multipart upload that waits for 100 Continue (sent once the token is checked, D48), so the
  // request is in the service when SIGTERM comes; then its rows trickle in, one every 100 ms.
  const boundary = 'npmstartboundary'
  const rows = SAMPLE_TOWNS.slice(0, ROWS).map((town) => `15-01-2020,14-02-2020,${town},180.00,170.00,160.00`)
  const upload = request(`${base}/v1/ingest/csv`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': `multipart/form-data; boundary=${boundary}`, expect: '100-continue' }
  })
  const answered = new Promise<{ status: number, body: string }>((resolve, reject) => {
    upload.once('response', (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (d: string) => { body += d }).once('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    upload.once('error', reject)
  })
  await new Promise<void>((resolve) => upload.once('continue', resolve))
  npm.kill('SIGTERM')
  upload.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n${HEADER}\n`)
  for (const row of rows) { await sleep(ROW_GAP_MS); upload.write(`${row}\n`) }
  upload.end(`\r\n--${boundary}--\r\n`)
  const res = await answered
  t.equal(res.status, 201, 'the upload in flight when SIGTERM came is stored')
  t.match(JSON.parse(res.body), { status: 'success', records_processed: ROWS, inserted: ROWS, updated: 0, unchanged: 0 }, 'with every row')
  t.equal(await exited, 0, 'npm start exits 0 once the server has closed')
  t.ok(await portRefuses(Number(new URL(base).port)), 'the port is free')
  const lock = lockDataDir(dataDir)
  lock.release()
  t.pass('DATA_DIR is unlocked')
  // npm's own lines (`> fuel-price-service@… prestart`) and the build check's are not the server's.
  const lines = stdout.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('>') && !l.startsWith('build: '))
  t.same(lines.filter((l) => { try { JSON.parse(l); return false } catch { return true } }), [], 'every line the server logged is JSON')
  t.ok(lines.some((l) => (JSON.parse(l) as { msg?: string }).msg === 'shutting down'), 'including the shutdown line')
})
