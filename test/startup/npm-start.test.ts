import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { lockDataDir } from '../../src/db/data-dir-lock.js'
import { HEADER } from '../fixtures/ingest.js'
import { SAMPLE_TOWNS } from '../fixtures/towns.js'
import { freePort, sleep } from '../support/processes.js'

/**
 * D47: `npm start` (the README's command, for replicas too) is stopped by a SIGTERM sent to the
 * npm process, as a process manager sends it: an upload in flight for longer than 30 s still
 * completes, every line logged is JSON, and then the port is free and DATA_DIR unlocked.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TOKEN = 'npm-start-token'

const portRefuses = async (port: number): Promise<boolean> => await new Promise((resolve) => {
  const socket = connect(port, '127.0.0.1')
  socket.once('connect', () => { socket.destroy(); resolve(false) })
  socket.once('error', () => resolve(true))
})

t.test('SIGTERM to npm start: in-flight upload finishes, then port and DATA_DIR are released', async (t) => {
  const port = await freePort()
  const dataDir = join(mkdtempSync(join(tmpdir(), 'fuel-npm-start-')), 'data')
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, INGEST_TOKEN: TOKEN, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  npm.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  npm.stderr.on('data', () => {})
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)))
  t.teardown(() => { if (npm.exitCode === null) npm.kill('SIGKILL') })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 300 && !(await fetch(`${base}/v1/health`).then((r) => r.ok, () => false)); i++) await sleep(200)

  // A multipart upload trickled over 36 s, one row a second (the body idle timeout is 10 s).
  const boundary = 'npmstartboundary'
  const rows = SAMPLE_TOWNS.slice(0, 36).map((town) => `15-01-2020,14-02-2020,${town},180.00,170.00,160.00`)
  const body = new ReadableStream<Uint8Array>({
    async start (controller) {
      const enc = new TextEncoder()
      controller.enqueue(enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n${HEADER}\n`))
      for (const row of rows) { await sleep(1000); controller.enqueue(enc.encode(`${row}\n`)) }
      controller.enqueue(enc.encode(`\r\n--${boundary}--\r\n`))
      controller.close()
    }
  })
  const upload = fetch(`${base}/v1/ingest/csv`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    duplex: 'half'
  } as RequestInit)
  await sleep(2000)
  npm.kill('SIGTERM')
  const res = await upload
  t.equal(res.status, 201, 'the upload in flight when SIGTERM came is stored')
  t.match(await res.json(), { status: 'success', records_processed: 36, inserted: 36, updated: 0, unchanged: 0 }, 'with every row')
  t.equal(await exited, 0, 'npm start exits 0 once the server has closed')
  t.ok(await portRefuses(port), 'the port is free')
  const lock = lockDataDir(dataDir)
  lock.release()
  t.pass('DATA_DIR is unlocked')
  const lines = stdout.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('>'))
  t.same(lines.filter((l) => { try { JSON.parse(l); return false } catch { return true } }), [], 'every line the server logged is JSON')
  t.ok(lines.some((l) => (JSON.parse(l) as { msg?: string }).msg === 'shutting down'), 'including the shutdown line')
})
