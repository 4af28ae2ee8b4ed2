import { sql } from 'drizzle-orm'
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import t from '../support/file-test.js'
import { csv, HEADER, TOKEN, upload } from '../fixtures/ingest.js'
import { build, resetData, testDatabase } from '../helper.js'
import { seedFixture } from './_fixtures.js'

// The fixture: cycles 2026-08-15, 2026-09-15 and 2026-10-15 of five towns; in cycle c (Sep 0,
// Oct 1, Aug 2) town i (Nairobi 0, Mombasa 1, Elburgon 2, El Wak 3, Moi's Bridge 4) costs
// super 180 + c + i/10 + 0.05, diesel 170 + c + i/10, kerosene 150.5 + c.
t.beforeEach(seedFixture)

const STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/

/** Oct 2026, computed by hand. Kerosene is the same everywhere: both ends go to the first town in D3 order. */
const OCTOBER = {
  valid_from: '2026-10-15',
  valid_to: '2026-11-14',
  towns: 5,
  super_petrol: { min: 181.05, max: 181.45, mean: 181.25, median: 181.25, cheapest_town: 'Nairobi', dearest_town: "Moi's Bridge" },
  diesel: { min: 171, max: 171.4, mean: 171.2, median: 171.2, cheapest_town: 'Nairobi', dearest_town: "Moi's Bridge" },
  kerosene: { min: 151.5, max: 151.5, mean: 151.5, median: 151.5, cheapest_town: 'El Wak', dearest_town: 'El Wak' }
}

const withoutStamp = (cycle: Record<string, unknown>): Record<string, unknown> => {
  const { published_at: _stamp, ...rest } = cycle
  return rest
}

t.test('[D41] GET /v1/cycles: newest first, per fuel min/max/mean/median and the cheapest and dearest town', async (t) => {
  const app = await build(t)
  const res = await app.inject('/v1/cycles')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'public, max-age=86400, s-maxage=604800')
  const body = res.json() as Array<Record<string, unknown>>
  t.strictSame(body.map((c) => c.valid_from), ['2026-10-15', '2026-09-15', '2026-08-15'])
  t.strictSame(withoutStamp(body[0] as Record<string, unknown>), OCTOBER)
  t.match(body[0]?.published_at, STAMP, 'stamped when the rows were inserted')
  t.strictSame(withoutStamp(body[2] as Record<string, unknown>), {
    valid_from: '2026-08-15',
    valid_to: '2026-09-14',
    towns: 5,
    super_petrol: { min: 182.05, max: 182.45, mean: 182.25, median: 182.25, cheapest_town: 'Nairobi', dearest_town: "Moi's Bridge" },
    diesel: { min: 172, max: 172.4, mean: 172.2, median: 172.2, cheapest_town: 'Nairobi', dearest_town: "Moi's Bridge" },
    kerosene: { min: 152.5, max: 152.5, mean: 152.5, median: 152.5, cheapest_town: 'El Wak', dearest_town: 'El Wak' }
  })
  t.strictSame((await app.inject('/v1/cycles?limit=1&offset=1')).json().map((c: { valid_from: string }) => c.valid_from), ['2026-09-15'])
  t.strictSame((await app.inject('/v1/cycles?offset=3')).json(), [])
  t.strictSame((await app.inject('/v1/cycles?limit=0')).json(), {
    detail: [{ loc: ['query', 'limit'], msg: 'ensure this value is greater than or equal to 1', type: 'value_error.number.not_ge' }]
  })
})

t.test('[D41] published_at: null for rows stored before it was kept; the first ingest of a cycle, not a later update', async (t) => {
  const database = await testDatabase()
  await database.db.execute(sql`UPDATE fuel_prices SET published_at = NULL WHERE valid_from = '2026-08-15'`)
  const app = await build(t, { config: { ingestToken: TOKEN } })
  t.equal((await app.inject('/v1/cycles/2026-08-15')).json().published_at, null)

  const before = new Date(Math.floor(Date.now() / 1000) * 1000)
  t.equal((await upload(app, csv(HEADER, '15-12-2026,14-01-2027,Nairobi,190.00,180.00,160.00'))).statusCode, 201)
  const published = (await app.inject('/v1/cycles/2026-12-15')).json().published_at as string
  t.match(published, STAMP)
  t.ok(new Date(published) >= before && new Date(published) <= new Date(), `${published} is the ingest's time`)
  // A later upload that changes a price and adds a town keeps the cycle's first publication.
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal((await upload(app, csv(HEADER, '15-12-2026,14-01-2027,Nairobi,191.00,180.00,160.00', '15-12-2026,14-01-2027,Kisumu,192.00,181.00,161.00'))).statusCode, 201)
  const again = (await app.inject('/v1/cycles/2026-12-15')).json()
  t.equal(again.published_at, published)
  t.equal(again.towns, 2)
})

t.test('[D41] GET /v1/cycles/{valid_from}: one cycle, 404 for an unknown one, 422 for a malformed date', async (t) => {
  const app = await build(t)
  const one = await app.inject('/v1/cycles/2026-10-15')
  t.equal(one.statusCode, 200)
  t.strictSame(withoutStamp(one.json()), OCTOBER)
  const missing = await app.inject('/v1/cycles/2026-10-16')
  t.equal(missing.statusCode, 404)
  t.strictSame(missing.json(), { detail: 'No cycle starts on 2026-10-16.' })
  t.equal(missing.headers['cache-control'], 'no-store')
  const malformed = await app.inject('/v1/cycles/15-10-2026')
  t.equal(malformed.statusCode, 422)
  t.strictSame(malformed.json(), { detail: [{ loc: ['path', 'valid_from'], msg: 'invalid date format', type: 'value_error.date' }] })
})

t.test('[D41] GET /v1/prices/changes: each town beside the cycle before, D3 order, null where there is none', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const change = (price: number, previous: number | null): Record<string, number | null> =>
    ({ price, previous, change: previous === null ? null : Math.round((price - previous) * 100) / 100 })
  const october = (await app.inject('/v1/prices/changes')).json()
  // D3: El Wak, Elburgon, Moi's Bridge, Mombasa, Nairobi; each cost exactly 1.00 more than in September.
  const towns: Array<[string, number]> = [['El Wak', 3], ['Elburgon', 2], ["Moi's Bridge", 4], ['Mombasa', 1], ['Nairobi', 0]]
  const row = (town: string, i: number, c: number, previous: boolean): Record<string, unknown> => ({
    town,
    valid_from: c === 1 ? '2026-10-15' : '2026-08-15',
    valid_to: c === 1 ? '2026-11-14' : '2026-09-14',
    previous_valid_from: previous ? '2026-09-15' : null,
    super_petrol: change(Math.round((180 + c + i / 10 + 0.05) * 100) / 100, previous ? Math.round((180 + i / 10 + 0.05) * 100) / 100 : null),
    diesel: change(Math.round((170 + c + i / 10) * 100) / 100, previous ? Math.round((170 + i / 10) * 100) / 100 : null),
    kerosene: change(150.5 + c, previous ? 150.5 : null)
  })
  t.strictSame(october, towns.map(([town, i]) => row(town, i, 1, true)))
  t.equal(october[4].super_petrol.change, 1)

  t.strictSame((await app.inject('/v1/prices/changes?town=%20NAIROBI&valid_from=2026-10-15')).json(), [row('Nairobi', 0, 1, true)])
  // The oldest cycle has none before it.
  t.strictSame((await app.inject('/v1/prices/changes?valid_from=2026-08-15&town=Mombasa')).json(), [row('Mombasa', 1, 2, false)])
  t.strictSame((await app.inject('/v1/prices/changes?town=Nowhere')).json(), [])
  const unknown = await app.inject('/v1/prices/changes?valid_from=2026-10-14')
  t.equal(unknown.statusCode, 404)
  t.strictSame(unknown.json(), { detail: 'No cycle starts on 2026-10-14.' })
  t.equal((await app.inject('/v1/prices/changes?valid_from=yesterday')).statusCode, 422)

  // A new cycle with a town that is new: null beside it; the others compare with October.
  t.equal((await upload(app, csv(HEADER, '15-11-2026,14-12-2026,Nairobi,179.99,171.00,151.50', '15-11-2026,14-12-2026,Kisumu,185.00,175.00,155.00'))).statusCode, 201)
  t.strictSame((await app.inject('/v1/prices/changes')).json(), [
    { town: 'Kisumu', valid_from: '2026-11-15', valid_to: '2026-12-14', previous_valid_from: null, super_petrol: change(185, null), diesel: change(175, null), kerosene: change(155, null) },
    { town: 'Nairobi', valid_from: '2026-11-15', valid_to: '2026-12-14', previous_valid_from: '2026-10-15', super_petrol: change(179.99, 181.05), diesel: change(171, 171), kerosene: change(151.5, 151.5) }
  ])
  t.equal((await app.inject('/v1/prices/changes?town=nairobi')).json()[0].super_petrol.change, -1.06)
})

t.test('[D41] an empty database: no cycles, no changes, an empty feed', async (t) => {
  const database = await testDatabase()
  await database.db.execute(sql`TRUNCATE fuel_prices RESTART IDENTITY`)
  const app = await build(t)
  t.strictSame((await app.inject('/v1/cycles')).json(), [])
  t.strictSame((await app.inject('/v1/prices/changes')).json(), [])
  const feed = new XMLParser().parse((await app.inject('/v1/cycles/feed.atom')).body)
  t.equal(feed.feed.updated, '1970-01-01T00:00:00Z')
  t.equal(feed.feed.entry, undefined)
})

t.test('[D41] GET /v1/cycles/feed.atom: well-formed Atom 1.0 with one entry per cycle, ETag and 304', async (t) => {
  const database = await testDatabase()
  await database.db.execute(sql`UPDATE fuel_prices SET published_at = '2026-10-14 08:30:00+00' WHERE valid_from = '2026-10-15'`)
  await database.db.execute(sql`UPDATE fuel_prices SET published_at = NULL WHERE valid_from <> '2026-10-15'`)
  const app = await build(t)
  const res = await app.inject('/v1/cycles/feed.atom')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/atom+xml; charset=utf-8')
  t.equal(XMLValidator.validate(res.body), true, 'well-formed XML')

  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', isArray: (name) => ['entry', 'link'].includes(name) }).parse(res.body)
  const feed = parsed.feed
  // RFC 4287 4.1.1: a feed has exactly one id, title and updated, an author, and a self link.
  t.equal(feed['@xmlns'], 'http://www.w3.org/2005/Atom')
  t.equal(feed.id, 'tag:fuelkenya.com,2026:cycles')
  t.equal(feed.title, 'Kenya fuel pump prices: pricing cycles')
  t.equal(feed.updated, '2026-10-14T08:30:00Z')
  t.strictSame(feed.author, { name: 'Fuel Price Service' })
  // D52: absolute, from the request when PUBLIC_URL is unset (inject's Host is localhost:80).
  t.strictSame(feed.link, [{ '@rel': 'self', '@type': 'application/atom+xml', '@href': 'http://localhost:80/v1/cycles/feed.atom' }])
  t.strictSame(feed.entry.map((e: { id: string }) => e.id), [
    'tag:fuelkenya.com,2026:cycles/2026-10-15', 'tag:fuelkenya.com,2026:cycles/2026-09-15', 'tag:fuelkenya.com,2026:cycles/2026-08-15'
  ])
  t.strictSame(feed.entry[0], {
    id: 'tag:fuelkenya.com,2026:cycles/2026-10-15',
    title: 'Pricing cycle 2026-10-15 to 2026-11-14',
    updated: '2026-10-14T08:30:00Z',
    published: '2026-10-14T08:30:00Z',
    link: [
      { '@rel': 'alternate', '@type': 'application/json', '@href': '/v1/prices?start_date=2026-10-15&end_date=2026-11-14&limit=1000' },
      { '@rel': 'related', '@type': 'application/json', '@title': 'Changes since the cycle before', '@href': '/v1/prices/changes?valid_from=2026-10-15' }
    ],
    summary: '5 towns. Super (PMS) 181.05 to 181.45 (mean 181.25); Diesel (AGO) 171.00 to 171.40 (mean 171.20); Kerosene (IK) 151.50 to 151.50 (mean 151.50). KSh per litre.'
  })
  // A cycle with no recorded publication is dated midnight of its first day in Kenya.
  t.equal(feed.entry[1].updated, '2026-09-15T00:00:00+03:00')
  t.equal(feed.entry[1].published, undefined)
  // Every link of an entry resolves to an answer of this service.
  for (const link of feed.entry[0].link as Array<{ '@href': string }>) {
    const answer = await app.inject(link['@href'])
    t.equal(answer.statusCode, 200, link['@href'])
    t.equal(answer.json().length, 5)
  }
  const again = await app.inject({ url: '/v1/cycles/feed.atom', headers: { 'if-none-match': res.headers.etag as string } })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
})

t.test('[D52] the feed\'s self link: PUBLIC_URL when set, else the request\'s protocol and Host', async (t) => {
  const selfLine = (body: string): string | undefined => body.split('\n').find((l) => l.includes('rel="self"'))
  const self = (href: string): string => `  <link rel="self" type="application/atom+xml" href="${href}"/>`
  const feed = async (app: Awaited<ReturnType<typeof build>>, headers: Record<string, string>) => await app.inject({ url: '/v1/cycles/feed.atom', headers })

  const fixed = await build(t, { config: { publicUrl: 'https://api.fuelkenya.com' } })
  const a = await feed(fixed, { host: 'internal:8000', 'x-forwarded-host': 'evil.example' })
  t.equal(selfLine(a.body), self('https://api.fuelkenya.com/v1/cycles/feed.atom'))
  t.equal(a.headers.vary, 'Origin, Accept-Encoding', 'the same bytes whatever the request says')

  const derived = await build(t)
  const b = await feed(derived, { host: 'feeds.example:8443', 'x-forwarded-proto': 'https' })
  t.equal(selfLine(b.body), self('https://feeds.example:8443/v1/cycles/feed.atom'))
  t.equal(b.headers.vary, 'Origin, X-Forwarded-Proto, X-Forwarded-Host, Accept-Encoding')
  t.equal(selfLine((await feed(derived, { host: 'internal:8000', 'x-forwarded-host': 'fuel.example' })).body),
    self('http://fuel.example/v1/cycles/feed.atom'), 'trustProxy (default true): X-Forwarded-Host counts')
  t.equal(selfLine((await feed(derived, { host: 'feeds.example:8443' })).body), self('http://feeds.example:8443/v1/cycles/feed.atom'),
    'each origin its own body, also the second time')
  t.equal(selfLine((await feed(derived, { host: 'a"b<c' })).body), self('/v1/cycles/feed.atom'), 'an odd Host: relative')

  const direct = await build(t, { config: { trustProxy: false } })
  const c = await feed(direct, { host: 'fuel.example', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' })
  t.equal(selfLine(c.body), self('http://fuel.example/v1/cycles/feed.atom'), 'TRUST_PROXY=false: forwarded headers ignored')
  t.equal(c.headers.vary, 'Origin, Accept-Encoding')
})

t.test('[D66] the feed ignores a forwarded protocol other than http/https and a forwarded host that is not a host', async (t) => {
  const selfOf = (body: string): string | undefined => /<link rel="self" type="application\/atom\+xml" href="([^"]*)"\/>/.exec(body)?.[1]
  const app = await build(t)
  const cases: Array<[Record<string, string>, string, string]> = [
    [{ host: 'fuel.example', 'x-forwarded-proto': 'javascript:alert(1)//' }, 'http://fuel.example/v1/cycles/feed.atom', 'a javascript: protocol is ignored'],
    [{ host: 'fuel.example', 'x-forwarded-proto': 'ftp' }, 'http://fuel.example/v1/cycles/feed.atom', 'only http and https'],
    [{ host: 'fuel.example', 'x-forwarded-proto': 'HTTPS' }, 'https://fuel.example/v1/cycles/feed.atom', 'a valid protocol in any case is honoured'],
    [{ host: 'fuel.example', 'x-forwarded-proto': 'http, https' }, 'https://fuel.example/v1/cycles/feed.atom', 'the last hop\'s, as Fastify reads it'],
    [{ host: 'fuel.example', 'x-forwarded-host': 'evil.example/x?' }, 'http://fuel.example/v1/cycles/feed.atom', 'a forwarded host with a path: the Host instead'],
    [{ host: 'fuel.example', 'x-forwarded-host': 'a"b<c' }, 'http://fuel.example/v1/cycles/feed.atom', 'markup: the Host instead'],
    [{ host: 'fuel.example', 'x-forwarded-host': 'bad_name.example:99999' }, 'http://fuel.example/v1/cycles/feed.atom', 'an underscore, a port past 65535'],
    [{ host: 'fuel.example', 'x-forwarded-host': '-x-.example' }, 'http://fuel.example/v1/cycles/feed.atom', 'a label starting with a hyphen'],
    [{ host: 'fuel.example', 'x-forwarded-host': 'API.FuelKenya.com:8443', 'x-forwarded-proto': 'https' }, 'https://api.fuelkenya.com:8443/v1/cycles/feed.atom', 'valid ones are honoured, the host lower-cased'],
    [{ host: 'fuel.example', 'x-forwarded-host': '[2001:db8::1]:8443' }, 'http://[2001:db8::1]:8443/v1/cycles/feed.atom', 'a bracketed IPv6 address'],
    [{ host: 'fuel.example', 'x-forwarded-host': '[2001:db8::zz]' }, 'http://fuel.example/v1/cycles/feed.atom', 'brackets around something else'],
    [{ host: 'bad host', 'x-forwarded-host': 'also bad', 'x-forwarded-proto': 'javascript:' }, '/v1/cycles/feed.atom', 'nothing valid: a relative link']
  ]
  for (const [headers, self, label] of cases) {
    const res = await app.inject({ url: '/v1/cycles/feed.atom', headers })
    t.equal(res.statusCode, 200, label)
    t.equal(selfOf(res.body), self, label)
    t.notMatch(res.body, /javascript|evil|bad_name/i, `${label}: nothing of the refused values in the body`)
  }
})

t.test('[spec 4.2 r6, widened] cycles, one cycle, changes and the feed are served from memory after the first request; an ingest clears them', async (t) => {
  const database = await testDatabase()
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const urls = ['/v1/cycles', '/v1/cycles/2026-10-15', '/v1/prices/changes', '/v1/cycles/feed.atom']
  const first = await Promise.all(urls.map(async (url) => (await app.inject(url)).body))
  const before = database.statements()
  for (const [i, url] of urls.entries()) t.equal((await app.inject(url)).body, first[i], url)
  t.equal(database.statements(), before, 'no statement reached the driver')

  t.equal((await upload(app, csv(HEADER, '15-11-2026,14-12-2026,Nairobi,179.99,171.00,151.50'))).statusCode, 201)
  const cycles = (await app.inject('/v1/cycles')).json() as Array<{ valid_from: string }>
  t.equal(cycles[0]?.valid_from, '2026-11-15')
  t.equal((await app.inject('/v1/prices/changes')).json()[0].valid_from, '2026-11-15')
  t.match((await app.inject('/v1/cycles/feed.atom')).body, '<id>tag:fuelkenya.com,2026:cycles/2026-11-15</id>')
})

t.test('/v1/cycles and /v1/prices/changes are compact JSON like every other answer', async (t) => {
  const app = await build(t)
  await resetData()
  t.equal((await upload(app, csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.00,170.00,160.00', '15-02-2026,14-03-2026,Nairobi,181.00,171.00,161.00'))).statusCode, 201)
  for (const url of ['/v1/cycles', '/v1/cycles/2026-02-15', '/v1/prices/changes']) {
    const body = (await app.inject(url)).body
    t.notMatch(body, /" : /, `${url}: no "key" : value`)
    t.equal(body, JSON.stringify(JSON.parse(body)), `${url}: compact`)
  }
  t.equal((await app.inject('/v1/prices/changes')).body,
    '[{"town":"Nairobi","valid_from":"2026-02-15","valid_to":"2026-03-14","previous_valid_from":"2026-01-15","super_petrol":{"price":181,"previous":180,"change":1},"diesel":{"price":171,"previous":170,"change":1},"kerosene":{"price":161,"previous":160,"change":1}}]')
})
