import t from '../support/file-test.js'
import postgres from 'postgres'
import { loadSampleTowns, sampleCycles } from '../../scripts/sample/generate.js'
import { ADMIN_URL, FaultProxy, type FaultPoint, createDatabase, csvForm, sleep, startService, type ServiceProcess } from './_harness.js'
import { paced } from '../support/pace.js'

/**
 * D47: the backend serving an ingest, a dry run or a read is terminated in each phase of its work
 * (the proxy holds the phase's first message back while the test terminates every backend of the
 * service, its listening connection included): the process stays up, no broken connection is
 * reused, reads answer again within seconds, the next ingest succeeds, and the table holds
 * exactly what the files say.
 */
if (ADMIN_URL === '') throw new Error('test/replicas needs TEST_DATABASE_URL (run it with npm run test:replicas)')

const TOKEN = 'fault-test-token'
const towns = loadSampleTowns()
const BASE = sampleCycles({ towns, cycles: 1, lastValidFrom: '2015-01-15' })
// All new records: the COPY path (D46). 40 cycles, ~450 KB of COPY data.
const NEW = sampleCycles({ towns, cycles: 40, lastValidFrom: '2026-10-15' })
// Includes BASE's cycle: COPY meets a stored key and the rows are upserted instead.
const OVERLAP = sampleCycles({ towns, cycles: 40, lastValidFrom: '2018-04-15' })
const rowsOf = (csv: string): number => csv.trim().split('\n').length - 1

interface Phase { name: string, marker: string, point?: FaultPoint, csv: string, dryRun?: boolean, read?: boolean }
const PHASES: Phase[] = [
  { name: 'ingest: the lock', marker: 'pg_advisory_xact_lock', csv: NEW },
  { name: 'ingest: COPY starts', marker: 'COPY fuel_prices', csv: NEW },
  { name: 'ingest: COPY data', marker: 'COPY fuel_prices', point: { afterBytes: 64 * 1024 }, csv: NEW },
  { name: 'ingest: the upsert', marker: 'INSERT INTO fuel_prices', csv: OVERLAP },
  { name: 'ingest: the notification', marker: 'pg_notify', csv: NEW },
  // postgres.js prepares its COMMIT: the message after the last statement is caught instead.
  { name: 'ingest: COMMIT', marker: 'pg_notify', point: { nextMessage: true }, csv: NEW },
  // A dry run reads what is stored in one statement, its counts and review both (D57).
  { name: 'dry run: the read', marker: 'json_array_elements_text', csv: OVERLAP, dryRun: true },
  // A page read is a prepared statement too: the first message the service sends is caught.
  { name: 'a read', marker: '', csv: NEW, read: true }
]

const post = async (service: ServiceProcess, csv: string, dryRun = false): Promise<Response> =>
  await fetch(`${service.url}/v1/ingest/csv${dryRun ? '/dry-run' : ''}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, ...client() }, body: csvForm(csv), signal: AbortSignal.timeout(paced(30_000)) })

let offset = 1
// A client address per request: the rate limit (60 a minute per address) is not under test here.
const client = (): Record<string, string> => ({ 'x-forwarded-for': `10.9.${(offset >> 8) & 255}.${offset++ & 255}` })
/** A page no earlier request asked for, so it is read from the database (not the read cache). */
const coldPage = async (service: ServiceProcess): Promise<Response> =>
  await fetch(`${service.url}/v1/prices?limit=3&offset=${offset}`, { headers: client(), signal: AbortSignal.timeout(paced(10_000)) })

/** The status of the first cold read to answer 200, polling for at most 5 s. */
async function readsRecover (service: ServiceProcess): Promise<number> {
  const started = Date.now()
  let status = 0
  while (Date.now() - started < 5000) {
    status = (await coldPage(service).catch(() => undefined))?.status ?? 0
    if (status === 200) break
    await sleep(100)
  }
  return status
}

for (const poolMax of [1, 10]) {
  t.test(`DB_POOL_MAX=${poolMax}: a backend lost in every phase`, async (t) => {
    const database = await createDatabase()
    t.teardown(database.drop)
    const direct = postgres(database.url, { max: 1, onnotice: () => {} })
    t.teardown(async () => { await direct.end() })
    const proxy = new FaultProxy(database.port)
    await proxy.start()
    t.teardown(async () => { await proxy.close() })
    const url = new URL(database.url)
    url.port = String(proxy.port)
    const service = await startService({ DATABASE_URL: url.toString(), INGEST_TOKEN: TOKEN, DB_POOL_MAX: String(poolMax) })
    t.teardown(async () => { await service.stop('SIGKILL') })

    const terminate = async (): Promise<void> => {
      await direct`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND (application_name = 'fuel-price-service' OR application_name LIKE 'fuel-listener %')`
    }
    const count = async (): Promise<number> => Number((await direct`SELECT count(*)::int AS n FROM fuel_prices`)[0]?.n)

    for (const phase of PHASES) {
      await direct`TRUNCATE fuel_prices RESTART IDENTITY`
      t.equal((await post(service, BASE)).status, 201, `${phase.name}: the base file is stored`)
      const caught = proxy.arm(phase.marker, terminate, phase.point)
      const res = phase.read === true ? await coldPage(service) : await post(service, phase.csv, phase.dryRun)
      await caught
      t.equal(res.status, 500, `${phase.name}: the request that lost its connection gets 500`)
      t.same(await res.json(), { detail: 'Internal Server Error' }, `${phase.name}: in the envelope`)
      t.equal(service.child.exitCode, null, `${phase.name}: the process is still up`)
      t.equal(await count(), rowsOf(BASE), `${phase.name}: nothing of the lost request was written`)

      t.equal(await readsRecover(service), 200, `${phase.name}: reads answer 200 within 5 s`)
      const next = await post(service, phase.csv)
      t.equal(next.status, 201, `${phase.name}: the next ingest is stored`)
      const expected = phase.csv === OVERLAP ? rowsOf(OVERLAP) : rowsOf(BASE) + rowsOf(phase.csv)
      t.equal(await count(), expected, `${phase.name}: the table holds exactly the files' rows`)
    }

    // A burst of reads while the backends go away: every answer is 200 or 500, and then 200 again.
    const burst = Array.from({ length: 40 }, async () => (await coldPage(service).catch(() => undefined))?.status ?? 0)
    await terminate()
    const statuses = await Promise.all(burst)
    t.same(statuses.filter((s) => s !== 200 && s !== 500), [], 'a read burst across the loss gets 200 or 500, never a dropped connection')
    t.equal(await readsRecover(service), 200, 'and reads answer 200 within 5 s')

    // D47: a read queued behind a lock is cut off by lock_timeout (5 s) with the contract's error.
    const locker = await direct.reserve()
    await locker`BEGIN`
    await locker`LOCK TABLE fuel_prices IN ACCESS EXCLUSIVE MODE`
    const started = Date.now()
    const blocked = await coldPage(service)
    const waited = Date.now() - started
    await locker`ROLLBACK`
    locker.release()
    t.equal(blocked.status, 500, 'a read waiting on a lock answers 500')
    t.same(await blocked.json(), { detail: 'Internal Server Error' }, 'in the envelope')
    t.ok(waited >= 4500 && waited < 9000, `after the lock timeout (${waited} ms)`)
    t.equal(await readsRecover(service), 200, 'and reads answer once the lock is gone')
    t.equal(service.child.exitCode, null, 'the process survived every fault')
    t.equal(await service.stop('SIGTERM'), 0, 'and stops cleanly')
  })
}
