import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from '../support/file-test.js'
import { projectRoot } from '../../src/project-root.js'
import { CSV_HEADER } from '../../src/domain/price-csv.js'
import { loadSampleTowns, sampleCycles } from '../../scripts/sample/generate.js'
import { serverArgs } from '../support/dist.js'
import { startServer as startProcess, type ServerProcess } from '../support/processes.js'
import { paced } from '../support/pace.js'
import { notLowered, threadNiceness } from '../support/threads.js'

/**
 * The embedded PGlite keeps what it acknowledged, as PostgreSQL does: the server runs as a real
 * process (from dist/, as `npm start` runs it) on a new temporary DATA_DIR (so the D36 initdb
 * child creates it: the one first start of the server on an empty directory), is stopped gracefully
 * and restarted, then killed (SIGKILL) while an upload is being written. D10/D14: an upload is
 * one transaction, so after the restart none or all of its rows are there.
 */
// It needs no PostgreSQL, so it runs in both of CI's passes (a skip there counts as a failure, D34).

const TOKEN = 'durability-token'

// Earlier data: one cycle, three towns, exact values to find again after every restart.
const EARLIER = [
  '15-01-2026,14-02-2026,Nairobi,180.52,171.47,161.75',
  '15-01-2026,14-02-2026,Mombasa,177.69,168.65,158.93',
  '15-01-2026,14-02-2026,Kisumu,180.39,171.34,161.62'
]
const EARLIER_CSV = [CSV_HEADER, ...EARLIER].join('\n') + '\n'

// The upload killed mid-way: 100 older cycles of the 233 sample towns, two batches of the upsert.
const BIG_CYCLES = 100
const BIG_CSV = sampleCycles({ towns: loadSampleTowns(), cycles: BIG_CYCLES, lastValidFrom: '2019-12-15' })
const BIG_ROWS = BIG_CYCLES * loadSampleTowns().length

/** The server from dist/ on `dataDir`, with only these settings: no DATABASE_URL nor REDIS_URL of the test's environment, no tap hooks. */
async function startServer (dataDir: string): Promise<ServerProcess> {
  return await startProcess({
    args: await serverArgs(),
    cwd: projectRoot(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir, LOG_LEVEL: 'error', INGEST_TOKEN: TOKEN }
  })
}

async function ingest (url: string, csv: string): Promise<Response> {
  const form = new FormData()
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'prices.csv')
  return await fetch(`${url}/v1/ingest/csv`, { method: 'POST', body: form, headers: { authorization: `Bearer ${TOKEN}` } })
}

/** Every stored row as the CSV export writes it (D43: no default limit), header dropped. */
async function storedRows (url: string): Promise<string[]> {
  const res = await fetch(`${url}/v1/prices.csv`)
  const text = await res.text()
  if (res.status !== 200) throw new Error(`prices.csv answered ${res.status}: ${text}`)
  return text.replace(/\r/g, '').split('\n').slice(1).filter((line) => line !== '')
}

/** The rows of the earlier cycle, sorted; the export writes the ingest's own form. */
function earlierRows (rows: string[]): string[] {
  return rows.filter((row) => row.startsWith('15-01-2026,')).sort()
}

/** Latest modification of the write-ahead log: moves when a transaction starts writing. */
function walWrittenAt (dataDir: string): number {
  const wal = join(dataDir, 'pg_wal')
  return Math.max(0, ...readdirSync(wal).filter((f) => /^[0-9A-F]{24}$/.test(f)).map((f) => statSync(join(wal, f)).mtimeMs))
}

t.test('[D36] PGlite mode: data survives a restart; after SIGKILL mid-upload none or all of it, earlier data intact', async (t) => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'fuel-durability-')), 'data')
  t.teardown(() => { rmSync(join(dataDir, '..'), { recursive: true, force: true }) })
  // A new directory: created by the D36 initdb child, then migrated.
  let server = await startServer(dataDir)
  t.teardown(async () => { await server.stop('SIGKILL') })
  if (existsSync('/proc/self/task')) {
    // Not durability, but a real server process is here: requests come first (src/serving-thread-first.ts).
    const pid = server.child.pid ?? 0
    const threads = threadNiceness(pid)
    t.equal(threads.get(pid), 0, 'the serving thread keeps its priority')
    t.same(notLowered(threads, pid), [], `the server's ${threads.size - 1} other threads run at nice 19`)
  }

  const first = await ingest(server.url, EARLIER_CSV)
  t.equal(first.status, 201)
  t.match(await first.json(), { records_processed: 3, inserted: 3, updated: 0, unchanged: 0 })
  t.same(earlierRows(await storedRows(server.url)), [...EARLIER].sort(), 'the earlier cycle is stored')

  // A graceful stop (SIGTERM) and a start: everything is there.
  await server.stop('SIGTERM')
  t.equal(server.child.exitCode, 0, 'a graceful stop exits 0')
  server = await startServer(dataDir)
  t.same(earlierRows(await storedRows(server.url)), [...EARLIER].sort(), 'earlier rows after a graceful restart')

  // An acknowledged update, then SIGKILL while a 23,300-row upload is being written: no shutdown
  // checkpoint, so the restart recovers from the WAL.
  const edited = EARLIER_CSV.replace('Nairobi,180.52', 'Nairobi,181.52')
  const second = await ingest(server.url, edited)
  t.equal(second.status, 201)
  t.match(await second.json(), { updated: 1, unchanged: 2 })
  const walBefore = walWrittenAt(dataDir)
  const upload = ingest(server.url, BIG_CSV).then((res) => res.status, () => 'connection lost' as const)
  const deadline = Date.now() + paced(30_000)
  while (walWrittenAt(dataDir) === walBefore && Date.now() < deadline) await sleep(2)
  await server.stop('SIGKILL')
  t.equal(await upload, 'connection lost', 'killed after the upload began writing, before its answer')

  server = await startServer(dataDir)
  const rows = await storedRows(server.url)
  const uploadRows = rows.length - EARLIER.length
  t.comment(`after restart ${uploadRows} of the killed upload's ${BIG_ROWS} rows are present`)
  t.ok(uploadRows === 0 || uploadRows === BIG_ROWS, `none or all of the killed upload (${uploadRows})`)
  t.same(earlierRows(rows), edited.trim().split('\n').slice(1).sort(), 'the acknowledged update survived SIGKILL, earlier data intact')
})
