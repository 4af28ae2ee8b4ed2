import { randomInt } from 'node:crypto'
import postgres from 'postgres'
import t from '../support/file-test.js'
import { INGEST_LOCK_KEY } from '../../src/db/locks.js'
import { ADMIN_URL, CuttableProxy, TEST_REDIS_URL, createDatabase, csvForm, sleep, startServices, type ServiceProcess } from './_harness.js'
import { needs } from '../services.js'

/**
 * Issue "Scale-out": two service processes on two ports, one PostgreSQL database, one Redis.
 * A client must not be able to tell them apart.
 */
if (ADMIN_URL === '') throw new Error('test/replicas needs TEST_DATABASE_URL (run it with npm run test:replicas)')

const TOKEN = 'replica-test-token'
const HEADER = 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)'
const cycle = (superPetrol: string): string => [
  HEADER,
  `15-10-2026,14-11-2026,Nairobi,${superPetrol},171.00,150.50`,
  `15-10-2026,14-11-2026,Mombasa,${superPetrol},170.00,149.50`
].join('\n')

const database = await createDatabase()
t.teardown(database.drop)
const env = { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL, INGEST_TOKEN: TOKEN, TRUST_PROXY: 'true' }
// C reads its database through a proxy that can hold what PostgreSQL sends, notifications included.
const late = new CuttableProxy(database.port)
await late.start()
t.teardown(async () => { await late.close() })
const throughLate = new URL(database.url)
throughLate.port = String(late.port)
const [a, b, c] = await startServices([env, env, { ...env, DATABASE_URL: throughLate.toString() }]) as [ServiceProcess, ServiceProcess, ServiceProcess]
t.teardown(async () => { await Promise.all([a.stop(), b.stop(), c.stop()]) })

// A random address, so that the requests of these tests and runs sharing this Redis never share an allowance.
const randomAddress = (): string => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`
/** A visitor of its own for each request: these tests count answers, not the rate limit. */
const get = async (url: string): Promise<Response> => await fetch(url, { headers: { 'x-forwarded-for': randomAddress() } })
const ingest = async (url: string, csv: string): Promise<Response> =>
  await fetch(`${url}/v1/ingest/csv`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': randomAddress() }, body: csvForm(csv) })
const latestSuper = async (url: string): Promise<number[]> =>
  ((await (await get(`${url}/v1/prices/latest`)).json()) as Array<{ super_petrol: number }>).map((p) => p.super_petrol)

t.test('[D26] an ingest on A is visible in B\'s latest on the very next request', async (t) => {
  t.equal((await ingest(a.url, cycle('180.00'))).status, 201)
  t.same(await latestSuper(b.url), [170 + 10, 180], 'B filled its cache (Mombasa, Nairobi)')
  t.same(await latestSuper(b.url), [180, 180], 'served from B\'s cache')
  t.equal((await ingest(a.url, cycle('199.99'))).status, 201)
  t.same(await latestSuper(b.url), [199.99, 199.99], 'B cleared its cache on A\'s commit')
  t.same(await latestSuper(a.url), [199.99, 199.99])
  // And the other way round.
  t.equal((await ingest(b.url, cycle('185.25'))).status, 201)
  t.same(await latestSuper(a.url), [185.25, 185.25])
})

t.test('[D26] a write answers once every replica has cleared, even one that hears it late, and waits 2 s at most', async (t) => {
  t.equal((await ingest(a.url, cycle('186.00'))).status, 201)
  t.same(await latestSuper(c.url), [186, 186], 'C filled its cache')
  late.delayMs = 400
  const started = Date.now()
  t.equal((await ingest(a.url, cycle('187.00'))).status, 201)
  t.ok(Date.now() - started >= 400, 'A answered only after C could have heard')
  t.same(await latestSuper(c.url), [187, 187], 'C cleared its cache before A answered')
  // A replica that cannot confirm within the wait does not hold the write longer than it.
  late.delayMs = 3500
  t.equal((await ingest(a.url, cycle('188.00'))).status, 201)
  late.delayMs = 0
  t.same(await latestSuper(c.url), [187, 187], 'A answered before C heard')
  t.match(a.output(), /"confirmed":2,"expected":3,"msg":"not every replica confirmed a change within the wait; answering anyway"/)
  let seen: number[] = []
  for (let i = 0; i < 30 && seen[0] !== 188; i++) {
    await sleep(200)
    seen = await latestSuper(c.url)
  }
  t.same(seen, [188, 188], 'and C cleared when the notification reached it')
})

t.test('[D26] the 2 s wait for confirmations starts at the commit, however long the write took', async (t) => {
  // Another session holds the ingest lock for 2.5 s, so A's ingest commits well after it began.
  const holder = postgres(database.url, { max: 1, onnotice: () => {} })
  t.teardown(async () => { await holder.end() })
  let taken = (): void => {}
  const lockTaken = new Promise<void>((resolve) => { taken = resolve })
  const held = holder.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${INGEST_LOCK_KEY}::bigint)`
    taken()
    await sleep(2500)
  })
  await lockTaken
  late.delayMs = 400
  const answer = ingest(a.url, cycle('189.00'))
  await held
  t.equal((await answer).status, 201)
  late.delayMs = 0
  t.same(await latestSuper(c.url), [189, 189], 'C cleared before A answered')
})

t.test('[D26] an ingest on A changes B\'s cached /v1/towns and /v1/prices pages at its next request', async (t) => {
  const towns = async (url: string): Promise<string[]> => await (await get(`${url}/v1/towns`)).json() as string[]
  const page = async (url: string): Promise<number[]> =>
    ((await (await get(`${url}/v1/prices?limit=10`)).json()) as Array<{ super_petrol: number }>).map((p) => p.super_petrol)
  t.equal((await ingest(a.url, cycle('181.00'))).status, 201)
  t.same(await towns(b.url), ['Mombasa', 'Nairobi'])
  t.same(await page(b.url), [181, 181])
  t.same(await page(b.url), [181, 181], 'served from B\'s cache')
  t.equal((await ingest(a.url, [cycle('182.50'), '15-10-2026,14-11-2026,Kisumu,183.00,172.00,151.00'].join('\n'))).status, 201)
  t.same(await towns(b.url), ['Kisumu', 'Mombasa', 'Nairobi'])
  t.same(await page(b.url), [183, 182.5, 182.5])
})

t.test('[D41] an ingest on A changes B\'s /v1/cycles, changes and feed at its next request', async (t) => {
  const newest = async (url: string): Promise<string> => ((await (await get(`${url}/v1/cycles`)).json()) as Array<{ valid_from: string }>)[0]?.valid_from ?? ''
  const nairobiChange = async (url: string): Promise<unknown> =>
    ((await (await get(`${url}/v1/prices/changes?town=Nairobi`)).json()) as Array<{ super_petrol: unknown }>)[0]?.super_petrol
  const feedHas = async (url: string, validFrom: string): Promise<boolean> =>
    (await (await get(`${url}/v1/cycles/feed.atom`)).text()).includes(`<id>tag:fuelkenya.com,2026:cycles/${validFrom}</id>`)
  t.equal(await newest(b.url), '2026-10-15')
  t.equal(await feedHas(b.url, '2026-11-15'), false)
  await nairobiChange(b.url) // cached on B now
  const november = [HEADER, '15-11-2026,14-12-2026,Nairobi,190.00,171.00,150.50'].join('\n')
  t.equal((await ingest(a.url, november)).status, 201)
  t.equal(await newest(b.url), '2026-11-15')
  t.strictSame(await nairobiChange(b.url), { price: 190, previous: 182.5, change: 7.5 })
  t.equal(await feedHas(b.url, '2026-11-15'), true)
})

t.test('[D22] 60 requests spread over A and B from one address: the 61st is 429 on either', await needs('redis'), async (t) => {
  const ip = randomAddress()
  const headers = { 'x-forwarded-for': `${ip}, 127.0.0.1` }
  const remaining: string[] = []
  for (let i = 0; i < 60; i++) {
    const res = await fetch(`${(i % 2 === 0 ? a : b).url}/v1/towns`, { headers })
    t.equal(res.status, 200)
    remaining.push(res.headers.get('ratelimit-remaining') ?? '')
    await res.arrayBuffer()
  }
  t.same(remaining, Array.from({ length: 60 }, (_, i) => String(59 - i)), 'one shared allowance counts down across replicas')
  for (const replica of [a, b]) {
    const res = await fetch(`${replica.url}/v1/prices`, { headers })
    t.equal(res.status, 429)
    t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
    t.same(await res.json(), { detail: 'Rate limit exceeded. Try again later.' })
    t.equal(res.headers.get('ratelimit-limit'), '60')
    t.equal(res.headers.get('ratelimit-remaining'), '0')
    t.match(res.headers.get('retry-after') ?? '', /^\d+$/)
  }
  // Health is exempt on both.
  t.equal((await fetch(`${b.url}/v1/health`, { headers })).status, 200)
})
