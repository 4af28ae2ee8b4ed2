import t from '../support/file-test.js'
import postgres from 'postgres'
import { ADMIN_URL, CuttableProxy, createDatabase, csvForm, sleep, startService } from './_harness.js'

/** D25, D27: the database goes away and comes back; the service answers throughout. */
if (ADMIN_URL === '') throw new Error('test/replicas needs TEST_DATABASE_URL (run it with npm run test:replicas)')

const TOKEN = 'outage-test-token'
const CSV = [
  'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)',
  '15-10-2026,14-11-2026,Nairobi,180.00,171.00,150.50',
  '15-10-2026,14-11-2026,Kisumu,182.00,172.00,151.50'
].join('\n')

const database = await createDatabase()
t.teardown(database.drop)
const proxy = new CuttableProxy(database.port)
await proxy.start()
t.teardown(async () => { await proxy.close() })
const viaProxy = new URL(database.url)
viaProxy.port = String(proxy.port)
const service = await startService({ DATABASE_URL: viaProxy.toString(), INGEST_TOKEN: TOKEN, DB_POOL_MAX: '4' })
t.teardown(async () => { await service.stop() })
const direct = postgres(database.url, { max: 1, onnotice: () => {} })
t.teardown(async () => { await direct.end() })

const count = async (): Promise<number> => Number((await direct`SELECT count(*)::int AS n FROM fuel_prices`)[0]?.n)

t.test('[D25][D27] while the database is cut: health 500 fast, cached latest served, other reads 500, ingest writes nothing', async (t) => {
  t.equal((await fetch(`${service.url}/v1/ingest/csv`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: csvForm(CSV) })).status, 201)
  const latest = await (await fetch(`${service.url}/v1/prices/latest`)).text()
  t.equal(await count(), 2)

  await proxy.cut()

  const started = Date.now()
  const health = await fetch(`${service.url}/v1/health`)
  t.ok(Date.now() - started < 2000, 'health answered within 2 s')
  t.equal(health.status, 500)
  t.same(await health.json(), { detail: 'Database unreachable' })
  t.equal(health.headers.get('cache-control'), 'no-store')

  const cached = await fetch(`${service.url}/v1/prices/latest`)
  t.equal(cached.status, 200, 'a filled latest cache keeps serving')
  t.equal(await cached.text(), latest)

  for (const path of ['/v1/prices', '/v1/towns']) {
    const res = await fetch(`${service.url}${path}`)
    t.equal(res.status, 500, path)
    t.same(await res.json(), { detail: 'Internal Server Error' })
    t.equal(res.headers.get('cache-control'), 'no-store')
  }

  const changed = CSV.replace('180.00', '199.00') + '\n15-10-2026,14-11-2026,Eldoret,181.00,170.00,150.00'
  const failed = await fetch(`${service.url}/v1/ingest/csv`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: csvForm(changed) })
  t.equal(failed.status, 500)
  t.same(await failed.json(), { detail: 'Internal Server Error' })

  await proxy.restore()

  // Recovery without a restart: the pool reconnects on the next query.
  let healthy = false
  for (let i = 0; i < 50 && !healthy; i++) {
    healthy = (await fetch(`${service.url}/v1/health`)).status === 200
    if (!healthy) await sleep(200)
  }
  t.ok(healthy, 'healthy again after the database returned')
  const prices = await fetch(`${service.url}/v1/prices`)
  t.equal(prices.status, 200)
  t.same((await prices.json() as Array<{ town: string, super_petrol: number }>).map((p) => [p.town, p.super_petrol]),
    [['Kisumu', 182], ['Nairobi', 180]], 'the ingest during the outage wrote nothing')
  t.equal(await count(), 2)
  t.equal(service.child.exitCode, null, 'the process never exited')
})
