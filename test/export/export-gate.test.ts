import { once } from 'node:events'
import net, { type AddressInfo } from 'node:net'
import { sql } from 'drizzle-orm'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import { paced } from '../support/pace.js'
import { ConfigError, loadConfig, type Config } from '../../src/config.js'
import { EXPORTS_BUSY } from '../../src/export/export-gate.js'
import { build, resetData, testDatabase } from '../helper.js'

/**
 * D63: CSV exports are bounded per process. A client that stops reading is cut off after
 * EXPORT_IDLE_TIMEOUT_MS (shortened here) and its slot and stream are freed; one that pauses for
 * less keeps its export; past EXPORT_MAX_CONCURRENT a new export is a 503 with Retry-After.
 * Real sockets throughout: back-pressure exists only there.
 */

const ROWS = 12_000
/** ~1 KB a line, so the export (~12.6 MB) is far larger than the socket buffers (~4 MB on loopback). */
const PAD = 1000
/** Keyset batches of 1000 rows: twelve full ones and the empty one that ends the export. */
const FULL_EXPORT_STATEMENTS = ROWS / 1000 + 1

const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

// Two cycles of half the rows each: an export of the later one (?start_date=) is half the table
// from its start, where each keyset batch scans only the rows before it in the index.
t.before(async () => {
  await resetData()
  const database = await testDatabase()
  await database.db.execute(sql`
    INSERT INTO fuel_prices (town, valid_from, valid_to, super_petrol, diesel, kerosene)
    SELECT 'Town ' || lpad(i::text, 6, '0') || ' ' || repeat('x', ${PAD}),
      CASE WHEN i <= ${ROWS / 2} THEN DATE '2026-10-15' ELSE DATE '2026-09-15' END,
      CASE WHEN i <= ${ROWS / 2} THEN DATE '2026-11-14' ELSE DATE '2026-10-14' END,
      180.50, 170.00, 150.00
    FROM generate_series(1, ${ROWS}) AS i`)
})

async function listening (t: Test, config: Partial<Config>): Promise<number> {
  const app = await build(t, { config })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

/** An export request whose client reads its first bytes and then nothing more. */
async function stalledExport (t: Test, port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  socket.on('error', () => {}) // the server's cut may arrive as a reset
  socket.write('GET /v1/prices.csv HTTP/1.1\r\nHost: localhost\r\n\r\n')
  const [first] = await once(socket, 'data') as [Buffer]
  socket.pause()
  t.match(first.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n/)
  return socket
}

/** The export as fetch reads it: status, Retry-After and the body. */
async function fetchExport (port: number, url = '/v1/prices.csv', headers: Record<string, string> = {}): Promise<{ status: number, retryAfter: string | null, cacheControl: string | null, body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers })
  return { status: res.status, retryAfter: res.headers.get('retry-after'), cacheControl: res.headers.get('cache-control'), body: await res.text() }
}

t.test('[D63] defaults and their variables', async (t) => {
  const defaults = loadConfig({})
  t.strictSame([defaults.exportMaxConcurrent, defaults.exportIdleTimeoutMs], [4, 30_000])
  const set = loadConfig({ EXPORT_MAX_CONCURRENT: '2', EXPORT_IDLE_TIMEOUT_MS: '5000' })
  t.strictSame([set.exportMaxConcurrent, set.exportIdleTimeoutMs], [2, 5000])
  t.throws(() => loadConfig({ EXPORT_MAX_CONCURRENT: '0' }), ConfigError)
  t.throws(() => loadConfig({ EXPORT_IDLE_TIMEOUT_MS: '10' }), ConfigError)
})

t.test('[D63] a client that stops reading is cut off after the idle bound; its stream stops and its slot is freed', async (t) => {
  const port = await listening(t, { exportIdleTimeoutMs: 1000, exportMaxConcurrent: 1 })
  const database = await testDatabase()
  const before = database.statements()
  const started = Date.now()
  const stalled = await stalledExport(t, port)

  // The slot is the stalled client's until the server cuts it off (the client, not reading, cannot see the cut yet).
  let busy = 0
  for (let status = 503; status === 503; busy++) {
    status = (await fetchExport(port, '/v1/prices.csv?limit=1')).status
    if (status === 503) await sleep(100)
    else t.equal(status, 200, 'the slot was freed')
    if (busy > 100) throw new Error('the stalled export was never cut off')
  }
  t.ok(busy > 1, 'refused while the stalled export held the slot')
  t.ok(Date.now() - started >= 1000, 'not before the idle bound')
  const pulled = database.statements() - before - 1 // the probe that got the slot read one batch
  t.ok(pulled < FULL_EXPORT_STATEMENTS, `the stalled export read ${pulled} of ${FULL_EXPORT_STATEMENTS} batches: never the whole table`)
  const settled = database.statements()
  await sleep(300)
  t.equal(database.statements(), settled, 'no batch is read for it after the cut')

  // Reading again, the client finds the export cut short: no last chunk, then the end of the connection.
  const chunks: Buffer[] = []
  stalled.on('data', (chunk: Buffer) => chunks.push(chunk))
  stalled.resume()
  await once(stalled, 'close')
  const text = Buffer.concat(chunks).toString('utf8')
  t.notOk(text.endsWith('\r\n0\r\n\r\n'), 'the chunked body never ended')
  t.ok(text.split('Town ').length - 1 < ROWS, 'and held fewer rows than the table')
})

t.test('[D63] pauses shorter than the idle bound never cut an export off', async (t) => {
  // The bound grows with the host's pace, the pauses do not: a slow host's own gaps between
  // chunks must not add up past it.
  const port = await listening(t, { exportIdleTimeoutMs: paced(1000) })
  const socket = net.connect(port, '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  socket.write('GET /v1/prices.csv?start_date=2026-10-15 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
  const chunks: Buffer[] = []
  let received = 0
  const pauses = [0, 2_000_000, 4_000_000] // bytes after which the client stops reading for 600 ms
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk)
    received += chunk.length
    if (pauses.length > 0 && received > (pauses[0] as number)) {
      pauses.shift()
      socket.pause()
      setTimeout(() => socket.resume(), 600)
    }
  })
  await once(socket, 'end')
  const text = Buffer.concat(chunks).toString('utf8')
  t.equal(pauses.length, 0, 'the client paused three times')
  t.match(text, /^HTTP\/1\.1 200 OK\r\n/)
  t.ok(text.endsWith('\r\n0\r\n\r\n'), 'the chunked body ended properly: not cut off')
  t.equal(text.split('Town ').length - 1, 6000, 'every row of the export')
})

t.test('[D63] the cap: exactly EXPORT_MAX_CONCURRENT exports at once, then 503 with Retry-After; HEAD and JSON pages are not held back', async (t) => {
  const port = await listening(t, { exportIdleTimeoutMs: 60_000, exportMaxConcurrent: 2 })
  const first = await stalledExport(t, port)
  await stalledExport(t, port)

  for (const [url, headers] of [['/v1/prices.csv', {}], ['/v1/prices', { accept: 'text/csv' }], ['/v1/prices?format=csv', {}]] as const) {
    const refused = await fetchExport(port, url, headers)
    t.equal(refused.status, 503, url)
    t.equal(refused.body, JSON.stringify({ detail: EXPORTS_BUSY }))
    t.equal(refused.body, '{"detail":"Too many CSV exports are running. Try again later."}')
    t.equal(refused.retryAfter, '5')
    t.equal(refused.cacheControl, 'no-store')
  }
  const head = await fetch(`http://127.0.0.1:${port}/v1/prices.csv`, { method: 'HEAD' })
  t.equal(head.status, 200, 'HEAD runs no export, so it needs no slot')
  const page = await fetch(`http://127.0.0.1:${port}/v1/prices?limit=1`)
  t.equal(page.status, 200, 'JSON pages are not exports')
  t.equal((await page.json() as unknown[]).length, 1)

  first.destroy() // a client that goes away frees its slot
  let status = 0
  for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
    const res = await fetchExport(port, '/v1/prices.csv?limit=10')
    status = res.status
    if (status !== 200) await sleep(100)
  }
  t.equal(status, 200, 'the freed slot takes the next export')
})
