import t from '../support/file-test.js'
import postgres from 'postgres'
import { sampleCycles, loadSampleTowns } from '../../scripts/sample/generate.js'
import { paced } from '../support/pace.js'
import { ADMIN_URL, createDatabase, csvForm, sleep, startService } from './_harness.js'

/** Issue "Scale-out" item 3: SIGKILL mid-ingest leaves the table as it was; SIGTERM finishes it. */
if (ADMIN_URL === '') throw new Error('test/replicas needs TEST_DATABASE_URL (run it with npm run test:replicas)')

const TOKEN = 'crash-test-token'
const towns = loadSampleTowns()
const BASE = sampleCycles({ towns, cycles: 1, lastValidFrom: '1990-01-15' })
// ~100,000 rows: long enough a write to be caught in the middle.
const LARGE = sampleCycles({ towns, cycles: 430, lastValidFrom: '2026-10-15' })

const database = await createDatabase()
t.teardown(database.drop)
const direct = postgres(database.url, { max: 1, onnotice: () => {} })
t.teardown(async () => { await direct.end() })

const snapshot = async (): Promise<string> => {
  const [row] = await direct`SELECT count(*)::int AS n, coalesce(max(id), 0) AS max_id,
    coalesce(sum(super_petrol + diesel + kerosene), 0)::text AS total FROM fuel_prices`
  return JSON.stringify(row)
}

/** Resolves once an ingest transaction holds its advisory lock (D14): the write is under way. */
const ingestInFlight = async (): Promise<void> => {
  for (const until = Date.now() + paced(20_000); Date.now() < until;) {
    const [row] = await direct`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
    if (Number(row?.n) > 0) return
    await sleep(10)
  }
  throw new Error('the ingest never started writing')
}

const post = async (url: string, csv: string): Promise<Response> =>
  await fetch(`${url}/v1/ingest/csv`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: csvForm(csv) })

t.test('SIGKILL in the middle of a large ingest leaves the table exactly as before', async (t) => {
  const service = await startService({ DATABASE_URL: database.url, INGEST_TOKEN: TOKEN })
  t.equal((await post(service.url, BASE)).status, 201)
  const before = await snapshot()
  const upload = post(service.url, LARGE).then((r) => r.status, () => 'connection lost')
  await ingestInFlight()
  service.child.kill('SIGKILL')
  await service.exited
  t.equal(service.child.signalCode, 'SIGKILL')
  t.equal(await upload, 'connection lost')
  // PostgreSQL rolls back the dead session's transaction; wait until its backend is gone.
  for (let i = 0; i < 100; i++) {
    const [row] = await direct`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'fuel-price-service'`
    if (Number(row?.n) === 0) break
    await sleep(50)
  }
  t.equal(await snapshot(), before)
})

t.test('SIGTERM during an ingest: the upload completes with 201, then the process exits 0', async (t) => {
  const service = await startService({ DATABASE_URL: database.url, INGEST_TOKEN: TOKEN })
  const upload = post(service.url, LARGE)
  await ingestInFlight()
  service.child.kill('SIGTERM')
  const res = await upload
  t.equal(res.status, 201)
  const body = await res.json() as { records_processed: number }
  t.equal(body.records_processed, 100_190)
  t.equal(await service.exited, 0)
  const [row] = await direct`SELECT count(*)::int AS n FROM fuel_prices`
  t.equal(Number(row?.n), 233 + 100_190)
})
