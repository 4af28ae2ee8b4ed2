import t from '../support/file-test.js'
import { build } from '../helper.js'
import { seedFixture } from '../routes/_fixtures.js'
import { HEADER, csv, upload } from '../fixtures/ingest.js'

/** GET /metrics: Prometheus text from a per-app registry plus the process metrics. */

t.before(seedFixture)

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

t.test('Prometheus text format, no-store, process metrics included', async (t) => {
  const app = await build(t)
  const res = await app.inject('/metrics')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  t.equal(res.headers['cache-control'], 'no-store')
  for (const line of [
    '# TYPE http_requests_total counter',
    '# TYPE http_request_duration_seconds histogram',
    '# TYPE fuel_latest_cache_hits_total counter',
    '# TYPE fuel_latest_cache_misses_total counter',
    '# TYPE fuel_ingests_total counter',
    '# TYPE fuel_ingest_rows_total counter',
    '# TYPE process_cpu_user_seconds_total counter',
    '# TYPE nodejs_eventloop_lag_seconds gauge',
    '# TYPE nodejs_heap_size_used_bytes gauge'
  ]) t.ok(res.body.includes(`\n${line}\n`) || res.body.startsWith(`${line}\n`), line)
})

t.test('requests are counted and timed by method, route pattern and status', async (t) => {
  const app = await build(t)
  await app.inject('/v1/prices?town=nairobi')
  await app.inject('/v1/prices?town=mombasa&limit=2')
  await app.inject('/v1/prices?limit=0')
  await app.inject('/v1/no/such/path')
  await app.inject('/v1/also/missing')
  await app.inject({ method: 'DELETE', url: '/v1/towns' })
  const text = (await app.inject('/metrics')).body
  t.equal(sample(text, 'http_requests_total{method="GET",route="/v1/prices",status_code="200"}'), 2, 'query strings do not make new series')
  t.equal(sample(text, 'http_requests_total{method="GET",route="/v1/prices",status_code="422"}'), 1)
  t.equal(sample(text, 'http_requests_total{method="GET",route="unmatched",status_code="404"}'), 2, 'unknown paths share one series')
  t.equal(sample(text, 'http_requests_total{method="DELETE",route="unmatched",status_code="405"}'), 1)
  t.equal(sample(text, 'http_request_duration_seconds_count{method="GET",route="/v1/prices",status_code="200"}'), 2)
  t.equal(sample(text, 'http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/v1/prices",status_code="200"}'), 2)
  t.ok((sample(text, 'http_request_duration_seconds_sum{method="GET",route="/v1/prices",status_code="200"}') ?? -1) > 0)
  t.notOk(text.includes('nairobi'), 'no raw URL in any label')
})

t.test('D45: a streamed export is counted once, when its body has ended; HEAD is its own series', async (t) => {
  const app = await build(t)
  t.equal((await app.inject('/v1/prices.csv?limit=2')).statusCode, 200)
  t.equal((await app.inject({ method: 'HEAD', url: '/v1/towns' })).statusCode, 200)
  const text = (await app.inject('/metrics')).body
  t.equal(sample(text, 'http_requests_total{method="GET",route="/v1/prices.csv",status_code="200"}'), 1)
  t.equal(sample(text, 'http_request_duration_seconds_count{method="GET",route="/v1/prices.csv",status_code="200"}'), 1)
  t.equal(sample(text, 'http_requests_total{method="HEAD",route="/v1/towns",status_code="200"}'), 1, 'HEAD counted once')
  t.equal(sample(text, 'http_requests_total{method="GET",route="/v1/towns",status_code="200"}'), undefined)
})

t.test('[spec 4.2 r6] latest-cache hits and misses are the cache\'s own tallies', async (t) => {
  const app = await build(t)
  for (let i = 0; i < 3; i++) t.equal((await app.inject('/v1/prices/latest')).statusCode, 200)
  const text = (await app.inject('/metrics')).body
  t.equal(sample(text, 'fuel_latest_cache_misses_total'), 1)
  t.equal(sample(text, 'fuel_latest_cache_hits_total'), 2)
  t.equal(app.readCache.latestMisses, 1)
  t.equal(app.readCache.latestHits, 2)
  app.readCache.clear()
  await app.inject('/v1/prices/latest')
  const after = (await app.inject('/metrics')).body
  t.equal(sample(after, 'fuel_latest_cache_misses_total'), 2)
  t.equal(sample(after, 'fuel_latest_cache_hits_total'), 2)
})

t.test('ingest counters count committed uploads and their rows, not rejected or dry runs', async (t) => {
  const app = await build(t)
  const before = (await app.inject('/metrics')).body
  t.equal(sample(before, 'fuel_ingests_total'), 0)
  t.equal(sample(before, 'fuel_ingest_rows_total'), 0)
  const file = csv(HEADER, '15-10-2026,14-11-2026,Nairobi,180.00,171.00,150.50', '15-10-2026,14-11-2026,Kisumu,181.00,172.00,151.50')
  t.equal((await upload(app, file)).statusCode, 201)
  t.equal((await upload(app, file, { query: '?dry_run=true' })).statusCode, 200)
  t.equal((await upload(app, csv(HEADER, '15-10-2026,14-11-2026,Nairobi,abc,171.00,150.50'))).statusCode, 400)
  t.equal((await upload(app, csv(HEADER, '15-10-2026,14-11-2026,Nyeri,182.00,173.00,152.50'))).statusCode, 201)
  const text = (await app.inject('/metrics')).body
  t.equal(sample(text, 'fuel_ingests_total'), 2)
  t.equal(sample(text, 'fuel_ingest_rows_total'), 3)
  await seedFixture()
})

t.test('METRICS_TOKEN: Bearer token required when set (401 otherwise, no-store)', async (t) => {
  const app = await build(t, { config: { metricsToken: 'scrape-secret' } })
  for (const authorization of [undefined, 'Bearer wrong', 'Basic c2NyYXBlLXNlY3JldA==', 'Bearer scrape-secret-and-more', 'Bearer ']) {
    const res = await app.inject({ url: '/metrics', headers: authorization === undefined ? {} : { authorization } })
    t.equal(res.statusCode, 401, String(authorization))
    t.same(res.json(), { detail: 'Invalid authorization token for metrics endpoint.' })
    t.equal(res.headers['www-authenticate'], 'Bearer')
    t.equal(res.headers['cache-control'], 'no-store')
  }
  for (const authorization of ['Bearer scrape-secret', 'bearer  scrape-secret']) {
    t.equal((await app.inject({ url: '/metrics', headers: { authorization } })).statusCode, 200, authorization)
  }
  const open = await build(t)
  t.equal((await open.inject('/metrics')).statusCode, 200, 'unset: open')
})

t.test('[D22] /metrics is never rate limited', async (t) => {
  const app = await build(t, { rateLimitMax: 2 })
  for (let i = 0; i < 4; i++) {
    const res = await app.inject({ url: '/metrics', headers: { 'x-forwarded-for': '198.51.100.7' } })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['ratelimit-limit'], undefined)
  }
})

t.test('each app has its own registry: two apps in one process count apart', async (t) => {
  const one = await build(t)
  const two = await build(t)
  await one.inject('/v1/towns')
  await one.inject('/v1/towns')
  await two.inject('/v1/towns')
  const series = 'http_requests_total{method="GET",route="/v1/towns",status_code="200"}'
  t.equal(sample((await one.inject('/metrics')).body, series), 2)
  t.equal(sample((await two.inject('/metrics')).body, series), 1)
  t.not(one.metrics.registry, two.metrics.registry)
})
