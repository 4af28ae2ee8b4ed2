import { randomInt } from 'node:crypto'
import { request } from 'node:http'
import t from '../support/file-test.js'
import { ADMIN_URL, TEST_REDIS_URL, createDatabase, csvForm, freePort, sleep, startServices, type ServiceProcess } from './_harness.js'
import { REQUIRE_SERVICES, needs } from '../services.js'
import { startVarnish, type VarnishProcess } from '../support/varnish.js'
import { paced } from '../support/pace.js'

/**
 * Issue "Behind a shared cache" (D70, D71): Debian's Varnish running deploy/varnish/default.vcl in
 * front of two replicas on one PostgreSQL (Redis holding the shared allowance), every process
 * real. Clients reach the cache from addresses of their own in 127/8, so they never share an
 * allowance with each other or with other runs on this Redis; the replicas purge from 127.0.0.1.
 */
const INGEST_TOKEN = 'cache-test-ingest-token'
const PURGE_TOKEN = 'cache-test-purge-token'
const HEADER = 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)'
/** 30 towns, so the answers are large enough to be sent compressed (the service's threshold is 1 KiB). */
const TOWNS = Array.from({ length: 30 }, (_, i) => `Town ${String(i + 1).padStart(2, '0')}`)
const october = [HEADER, ...TOWNS.map((town) => `15-10-2026,14-11-2026,${town},180.00,171.00,150.50`)].join('\n')
const november = (superPetrol: string): string =>
  [HEADER, ...[...TOWNS, 'Kisumu'].map((town) => `15-11-2026,14-12-2026,${town},${superPetrol},172.00,151.00`)].join('\n')
/** What the cache must show within this bound after a change's answer (issue 47). */
const VISIBLE_WITHIN_MS = 2000

const randomLoopback = (): string => `127.${randomInt(1, 255)}.${randomInt(256)}.${randomInt(1, 255)}`

const noDatabase = ADMIN_URL === '' ? 'TEST_DATABASE_URL is not set (npm run test:replicas runs this file with it in .ci/run)' : false
if (noDatabase !== false && REQUIRE_SERVICES) t.fail(`REQUIRE_SERVICES=1: ${noDatabase}`)
const { skip: missing } = await needs('postgres', 'redis', 'varnishd')
const skip = missing !== false ? missing : noDatabase

if (skip !== false) {
  t.test('Varnish in front of two replicas on one PostgreSQL', { skip }, async () => {})
} else {
  await sharedCacheTests()
}

interface Answer { status: number, headers: Record<string, string>, body: Buffer, text: string }

/** Varnish in front of two replicas on a new database; whatever started is stopped if the rest fails. */
async function startAll (): Promise<{ a: ServiceProcess, b: ServiceProcess, varnish: VarnishProcess, stop: () => Promise<void> }> {
  const stops: Array<() => Promise<unknown>> = []
  const stop = async (): Promise<void> => {
    for (const s of stops.reverse()) await s()
    stops.length = 0
  }
  try {
    const database = await createDatabase()
    stops.push(database.drop)
    const varnishPort = await freePort()
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      INGEST_TOKEN,
      TRUST_PROXY: 'true', // the default, and the one a forged X-Forwarded-For would fool
      CACHE_PURGE_URL: `http://127.0.0.1:${varnishPort}/`,
      CACHE_PURGE_TOKEN: PURGE_TOKEN
    }
    const [a, b] = await startServices([env, env]) as [ServiceProcess, ServiceProcess]
    stops.push(a.stop, b.stop)
    const varnish = await startVarnish({
      backendPorts: [a, b].map((r) => Number(new URL(r.url).port)),
      env: { CACHE_PURGE_TOKEN: PURGE_TOKEN },
      port: varnishPort
    })
    stops.push(varnish.stop)
    return { a, b, varnish, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

async function sharedCacheTests (): Promise<void> {
  const { a, b, varnish, stop } = await startAll()
  t.teardown(stop)

  /** A request to the cache from `from` (a loopback address of this client's own). */
  const send = async (method: string, path: string, headers: Record<string, string> = {}, from = CLIENT): Promise<Answer> =>
    await new Promise((resolve, reject) => {
      const req = request(`${varnish.url}${path}`, { method, headers, localAddress: from, agent: false }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const flat: Record<string, string> = {}
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v
          const body = Buffer.concat(chunks)
          resolve({ status: res.statusCode ?? 0, headers: flat, body, text: body.toString() })
        })
        res.on('error', reject)
      })
      req.setTimeout(paced(30_000), () => req.destroy(new Error(`${method} ${path}: no answer in ${paced(30_000)} ms`)))
      req.on('error', reject)
      req.end()
    })
  const CLIENT = randomLoopback()
  const get = async (path: string, headers: Record<string, string> = {}, from = CLIENT): Promise<Answer> => await send('GET', path, headers, from)
  /** Varnish's X-Varnish holds two transaction ids on a hit, one on a miss or pass. */
  const hit = (answer: Answer): boolean => /^\d+ \d+$/.test(answer.headers['x-varnish'] ?? '')
  const purge = async (tags: string, headers: Record<string, string> = { authorization: `Bearer ${PURGE_TOKEN}` }, from = '127.0.0.1'): Promise<Answer> =>
    await send('PURGE', '/', { 'surrogate-key': tags, ...headers }, from)

  // The admin's own address for the writes, so its allowance is never another run's.
  const admin = { authorization: `Bearer ${INGEST_TOKEN}`, 'x-forwarded-for': randomLoopback() }
  const ingest = async (replica: ServiceProcess, csv: string): Promise<Response> =>
    await fetch(`${replica.url}/v1/ingest/csv`, { method: 'POST', headers: admin, body: csvForm(csv) })
  const withdraw = async (replica: ServiceProcess, validFrom: string): Promise<Response> =>
    await fetch(`${replica.url}/v1/cycles/${validFrom}`, { method: 'DELETE', headers: admin })

  /** How long until `check` holds for what the cache answers (polled every 50 ms), or undefined past the bound. */
  const visibleAfter = async (path: string, check: (answer: Answer) => boolean): Promise<number | undefined> => {
    const start = Date.now()
    for (;;) {
      if (check(await get(path))) return Date.now() - start
      if (Date.now() - start > VISIBLE_WITHIN_MS) return undefined
      await sleep(50)
    }
  }
  const json = <T>(answer: Answer): T => JSON.parse(answer.text) as T
  const latestCycle = (answer: Answer): string | undefined => json<Array<{ valid_from: string }>>(answer)[0]?.valid_from
  const feedHas = (validFrom: string) => (answer: Answer): boolean => answer.text.includes(`<id>tag:fuelkenya.com,2026:cycles/${validFrom}</id>`)

  const READS: Array<[path: string, tag: string]> = [
    ['/v1/prices/latest', 'latest'],
    ['/v1/towns', 'towns'],
    ['/v1/cycles', 'cycles'],
    ['/v1/prices/changes', 'changes'],
    ['/v1/cycles/feed.atom', 'feed'],
    ['/v1/prices?limit=5', 'prices'],
    ['/v1/cycles/2026-10-15', 'cycle-2026-10-15']
  ]
  const warm = async (paths: string[]): Promise<void> => {
    for (const path of paths) await get(path)
  }

  t.test('[D70] repeated reads through the cache are hits, each filed under its tag; counters only on the miss', async (t) => {
    t.equal((await ingest(a, october)).status, 201)
    for (const [path, tag] of READS) {
      const first = await get(path)
      const second = await get(path)
      t.equal(first.status, 200, path)
      t.equal(hit(first), false, `${path}: the first read is a miss`)
      t.equal(hit(second), true, `${path}: the second is a hit`)
      t.match(second.headers.age, /^\d+$/, `${path}: a kept copy says its age`)
      t.equal(second.text, first.text, `${path}: the same body`)
      t.equal(first.headers['surrogate-key'], tag, `${path}: filed under ${tag}`)
      t.equal(second.headers['surrogate-key'], tag)
      t.match(first.headers['ratelimit-remaining'], /^\d+$/, `${path}: the client whose request reached a replica sees its count`)
      t.equal(second.headers['ratelimit-remaining'], undefined, `${path}: a kept copy carries nobody's count`)
      t.equal(second.headers['ratelimit-limit'], undefined)
    }
    // The cache answers what a replica answers (the feed's links name the host asked, so it is left out).
    for (const [path] of READS.filter(([p]) => !p.includes('feed'))) {
      const direct = await fetch(`${b.url}${path}`, { headers: { 'x-forwarded-for': randomLoopback() } })
      t.equal((await get(path)).text, await direct.text(), `${path}: as a replica answers it`)
    }
  })

  t.test('[D70] after an ingest through A, then through B, the new cycle shows through the cache within 2 s', async (t) => {
    const paths = READS.map(([path]) => path)
    await warm(paths)
    for (const path of paths) t.equal(hit(await get(path)), true, `${path} is held before the ingest`)
    const bansBefore = (await varnish.counters())['MAIN.bans_added'] ?? Number.NaN

    t.equal((await ingest(a, november('190.00'))).status, 201)
    const checks: Array<[string, (answer: Answer) => boolean]> = [
      ['/v1/prices/latest', (r) => latestCycle(r) === '2026-11-15'],
      ['/v1/towns', (r) => json<string[]>(r).includes('Kisumu')],
      ['/v1/cycles', (r) => latestCycle(r) === '2026-11-15'],
      ['/v1/prices/changes', (r) => latestCycle(r) === '2026-11-15'],
      ['/v1/cycles/feed.atom', feedHas('2026-11-15')],
      ['/v1/prices?limit=5', (r) => latestCycle(r) === '2026-11-15']
    ]
    for (const [path, check] of checks) {
      const ms = await visibleAfter(path, check)
      t.ok(ms !== undefined, `${path}: the new cycle within ${VISIBLE_WITHIN_MS} ms (${String(ms)} ms)`)
    }
    const bansAfter = (await varnish.counters())['MAIN.bans_added'] ?? Number.NaN
    t.equal(bansAfter - bansBefore, 1, 'one purge for the change, not one per replica or per row')
    const untouched = await get('/v1/cycles/2026-10-15')
    t.equal(hit(untouched), true, 'the page of a cycle the ingest did not touch is still held')

    // A correction uploaded through the other replica.
    await warm(['/v1/prices/latest', '/v1/cycles/2026-11-15'])
    t.equal((await ingest(b, november('195.50'))).status, 201)
    const superOf = (r: Answer): number | undefined => json<Array<{ super_petrol: number }>>(r)[0]?.super_petrol
    t.ok(await visibleAfter('/v1/prices/latest', (r) => superOf(r) === 195.5) !== undefined, 'latest shows the correction made through B')
    t.ok(await visibleAfter('/v1/cycles/2026-11-15', (r) => json<{ super_petrol: { max: number } }>(r).super_petrol.max === 195.5) !== undefined,
      'the touched cycle\'s own page too')
  })

  t.test('[D70] after a withdrawal through B, the cycle is gone through the cache within 2 s', async (t) => {
    const paths = [...READS.map(([path]) => path), '/v1/cycles/2026-11-15']
    await warm(paths)
    t.equal(hit(await get('/v1/cycles/2026-11-15')), true, 'the cycle\'s page is held before the withdrawal')
    t.equal((await withdraw(b, '2026-11-15')).status, 200)
    const checks: Array<[string, (answer: Answer) => boolean]> = [
      ['/v1/prices/latest', (r) => latestCycle(r) === '2026-10-15'],
      ['/v1/towns', (r) => !json<string[]>(r).includes('Kisumu')],
      ['/v1/cycles', (r) => latestCycle(r) === '2026-10-15'],
      ['/v1/prices/changes', (r) => latestCycle(r) === '2026-10-15'],
      ['/v1/cycles/feed.atom', (r) => r.status === 200 && !feedHas('2026-11-15')(r)],
      ['/v1/prices?limit=5', (r) => latestCycle(r) === '2026-10-15'],
      ['/v1/cycles/2026-11-15', (r) => r.status === 404]
    ]
    for (const [path, check] of checks) {
      const ms = await visibleAfter(path, check)
      t.ok(ms !== undefined, `${path}: the withdrawn cycle gone within ${VISIBLE_WITHIN_MS} ms (${String(ms)} ms)`)
    }
    const again = await get('/v1/cycles/2026-11-15')
    t.equal(again.status, 404)
    t.equal(hit(again), false, 'a 404 is never kept')
    t.equal(again.headers['cache-control'], 'no-store')
  })

  t.test('[D18] a 304 through the cache, with the ETag the cache gave', async (t) => {
    const gzip = { 'accept-encoding': 'gzip' }
    const first = await get('/v1/prices/latest', gzip)
    t.equal(first.headers['content-encoding'], 'gzip')
    const etag = first.headers.etag ?? ''
    t.match(etag, /^"[\w-]+-gzip"$/)
    const notModified = await get('/v1/prices/latest', { ...gzip, 'if-none-match': etag })
    t.equal(notModified.status, 304)
    t.equal(notModified.body.length, 0)
    t.equal(notModified.headers.etag, etag)
    t.equal(hit(notModified), true, 'answered by the cache')
    // A client that takes no gzip gets the body unzipped, its ETag weakened, and a 304 for it too.
    const plain = await get('/v1/prices/latest')
    t.equal(plain.headers['content-encoding'], undefined)
    t.equal(plain.headers.etag, `W/${etag}`)
    t.equal(json<unknown[]>(plain).length, TOWNS.length)
    t.equal((await get('/v1/prices/latest', { 'if-none-match': `W/${etag}` })).status, 304)
    // After a change the old tag no longer matches.
    t.equal((await ingest(a, october.replace('180.00', '181.00'))).status, 201)
    const changed = await get('/v1/prices/latest', { ...gzip, 'if-none-match': etag })
    t.equal(changed.status, 200)
    t.not(changed.headers.etag, etag)
  })

  t.test('[D71] forwarded headers, Origin and Accept cannot change another client\'s answer', async (t) => {
    const attacker = randomLoopback()
    const forged = {
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'javascript',
      'x-forwarded-for': '6.6.6.6',
      forwarded: 'for=6.6.6.6;host=evil.example;proto=https'
    }
    const self = `href="http://127.0.0.1:${varnish.port}/v1/cycles/feed.atom"`
    t.equal((await purge('feed prices towns')).status, 200)
    const poisoned = await get('/v1/cycles/feed.atom', forged, attacker)
    t.equal(hit(poisoned), false, 'the attacker\'s request filled the entry')
    t.ok(poisoned.text.includes(self), 'the forged headers did not even reach the replica')
    const clean = await get('/v1/cycles/feed.atom')
    t.equal(hit(clean), true)
    t.ok(clean.text.includes(self))
    t.notOk(clean.text.includes('evil'), 'the next client\'s feed names no forged host')

    // Accept: an odd value is kept apart; the usual ones share one entry each.
    const csvPreferred = await get('/v1/prices?limit=5', { accept: 'text/csv;q=0.9, application/json;q=0.1' }, attacker)
    t.equal(csvPreferred.headers['content-type'], 'text/csv; charset=utf-8', 'the attacker gets what it asked for')
    const plain = await get('/v1/prices?limit=5')
    t.equal(plain.headers['content-type'], 'application/json; charset=utf-8', 'a client without Accept still gets JSON')
    t.equal(hit(plain), false, 'from an entry of its own')
    const asJson = await get('/v1/prices?limit=5', { accept: 'application/json' })
    t.equal(asJson.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(hit(asJson), true, 'Accept: application/json shares the JSON entry')
    const browser = await get('/v1/prices?limit=5', { accept: 'text/html,application/xhtml+xml,*/*' })
    t.equal(browser.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(hit(browser), true, 'so does a browser\'s')
    const csv = await get('/v1/prices?limit=5', { accept: 'text/csv' })
    t.equal(csv.headers['content-type'], 'text/csv; charset=utf-8')
    t.equal(csv.headers['content-location'], '/v1/prices.csv?limit=5')

    // Origin: an origin the service does not allow is the same as none.
    const foreign = await get('/v1/towns', { origin: 'https://evil.example' }, attacker)
    t.equal(foreign.headers['access-control-allow-origin'], undefined)
    const allowed = await get('/v1/towns', { origin: 'https://fuelkenya.com' })
    t.equal(allowed.headers['access-control-allow-origin'], 'https://fuelkenya.com', 'an allowed origin gets its own answer')
    const none = await get('/v1/towns')
    t.equal(none.headers['access-control-allow-origin'], undefined)
    t.equal(hit(none), true, 'no Origin shares the entry the foreign one filled')
  })

  t.test('[D71] the cache writes X-Forwarded-For itself: a forged one buys no fresh allowance', async (t) => {
    const client = randomLoopback()
    const first = await get('/v1/prices?limit=11', { 'x-forwarded-for': '1.1.1.1' }, client)
    const second = await get('/v1/prices?limit=12', { 'x-forwarded-for': '2.2.2.2, 3.3.3.3' }, client)
    t.equal(hit(first) || hit(second), false, 'both reached a replica')
    t.same([first.headers['ratelimit-remaining'], second.headers['ratelimit-remaining']], ['59', '58'], 'one allowance, the client address\'s')
  })

  t.test('[D71] a 429 and a client\'s counters are never served to another client', async (t) => {
    const greedy = randomLoopback()
    const remaining: string[] = []
    for (let i = 0; i < 60; i++) {
      const answer = await get(`/v1/prices?limit=1&offset=${i}`, {}, greedy)
      t.equal(answer.status, 200)
      remaining.push(answer.headers['ratelimit-remaining'] ?? '')
    }
    t.same(remaining, Array.from({ length: 60 }, (_, i) => String(59 - i)), 'every one a miss, counted once')
    const refused = await get('/v1/prices?limit=1&offset=60', {}, greedy)
    t.equal(refused.status, 429)
    t.equal(refused.headers['cache-control'], 'no-store')
    t.equal(refused.headers['surrogate-key'], undefined)
    const other = randomLoopback()
    const same = await get('/v1/prices?limit=1&offset=60', {}, other)
    t.equal(same.status, 200, 'the next client gets the page, not the 429')
    t.equal(same.headers['ratelimit-remaining'], '59', 'with its own count')
    const kept = await get('/v1/prices?limit=1&offset=60', {}, randomLoopback())
    t.equal(hit(kept), true)
    t.equal(kept.headers['ratelimit-remaining'], undefined)
    // Kept answers cost a replica nothing, so they are served even to a client over its allowance.
    t.equal((await get('/v1/prices?limit=1&offset=0', {}, greedy)).status, 200)
  })

  t.test('[D71] purges are taken only from the configured addresses, with the token', async (t) => {
    await warm(['/v1/towns'])
    t.equal(hit(await get('/v1/towns')), true)
    t.equal((await purge('towns', { authorization: `Bearer ${PURGE_TOKEN}` }, '127.0.0.2')).status, 403, 'another address')
    t.equal((await purge('towns', {})).status, 401, 'no token')
    t.equal((await purge('towns', { authorization: 'Bearer guess' })).status, 401, 'a wrong token')
    const bad = await purge('towns .*')
    t.equal(bad.status, 400, 'a tag that is not one')
    t.same(JSON.parse(bad.text), { detail: 'Bad Request' })
    t.equal(hit(await get('/v1/towns')), true, 'the entry survived every refused purge')
    t.equal((await purge('towns')).status, 200)
    t.equal(hit(await get('/v1/towns')), false, 'the accepted one dropped it')
  })
}
