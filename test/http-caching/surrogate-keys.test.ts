import Fastify from 'fastify'
import t from '../support/file-test.js'
import httpCaching from '../../src/http-caching/index.js'
import { changeTags } from '../../src/http-caching/surrogate-keys.js'
import { operations } from '../../src/generated/openapi.js'
import { MemorySlidingWindowStore } from '../../src/rate-limit/memory-store.js'
import { TOKEN, upload } from '../fixtures/ingest.js'
import { build } from '../helper.js'
import { seedFixture } from '../routes/_fixtures.js'
import { OpenApiContract } from '../contract/openapi-validator.js'

/** D70: every public read names the data it depends on; nothing else carries a tag. */

// The fixture: cycles 2026-08-15, 2026-09-15 and 2026-10-15 (the latest) of five towns.
t.beforeEach(seedFixture)

t.test('[D70] every publicly cacheable read is filed under the tag of what it depends on, on 200, 304 and HEAD', async (t) => {
  const app = await build(t)
  const reads: Array<[url: string, tag: string]> = [
    ['/v1/prices', 'prices'],
    ['/v1/prices?town=nairobi&limit=2', 'prices'],
    ['/v1/prices.csv', 'prices'],
    ['/v1/prices/latest', 'latest'],
    ['/v1/prices/latest?town=Mombasa', 'latest'],
    ['/v1/prices/changes', 'changes'],
    ['/v1/prices/changes?valid_from=2026-09-15', 'changes'],
    ['/v1/towns', 'towns'],
    ['/v1/cycles', 'cycles'],
    ['/v1/cycles/feed.atom', 'feed'],
    ['/v1/cycles/2026-09-15', 'cycle-2026-09-15'],
    ['/v1/cycles/2026-10-15', 'cycle-2026-10-15']
  ]
  for (const [url, tag] of reads) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers['surrogate-key'], tag, url)
    t.equal((await app.inject({ method: 'HEAD', url })).headers['surrogate-key'], tag, `HEAD ${url}`)
    if (res.headers.etag !== undefined) {
      const notModified = await app.inject({ url, headers: { 'if-none-match': String(res.headers.etag) } })
      t.equal(notModified.statusCode, 304, url)
      t.equal(notModified.headers['surrogate-key'], tag, `304 ${url}`)
    }
  }
  // The old CSV spelling of /v1/prices is the same data.
  const csv = await app.inject({ url: '/v1/prices', headers: { accept: 'text/csv' } })
  t.equal(csv.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(csv.headers['surrogate-key'], 'prices')
})

t.test('[D70] no-store answers carry no tag: errors, health, the writes, a dry run, a 429', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN }, rateLimitStore: new MemorySlidingWindowStore({ max: 3 }) })
  const answers = [
    await app.inject('/v1/cycles/2031-01-15'), // 404
    await app.inject('/v1/prices?limit=0'), // 422
    await app.inject('/v1/health')
  ]
  const ingest = 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)\n15-10-2026,14-11-2026,Nairobi,181.00,171.00,150.50\n'
  answers.push(await upload(app, ingest, { query: '/dry-run' }))
  t.equal(answers.at(-1)?.statusCode, 200)
  answers.push(await app.inject('/v1/towns')) // the fourth request: 429
  t.strictSame(answers.map((r) => r.statusCode), [404, 422, 200, 200, 429])
  for (const res of answers) {
    t.equal(res.headers['cache-control'], 'no-store', `${res.statusCode} ${res.body.slice(0, 40)}`)
    t.equal(res.headers['surrogate-key'], undefined)
  }
  const writer = await build(t, { config: { ingestToken: TOKEN } })
  const created = await upload(writer, ingest)
  t.equal(created.statusCode, 201)
  t.equal(created.headers['surrogate-key'], undefined, 'a POST answer is never kept by a shared cache')
  const withdrawn = await writer.inject({ method: 'DELETE', url: '/v1/cycles/2026-10-15', headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(withdrawn.statusCode, 200)
  t.equal(withdrawn.headers['surrogate-key'], undefined)
})

t.test('[D70] a public read declared without tags is refused at start', async (t) => {
  const app = Fastify()
  await app.register(httpCaching)
  t.teardown(async () => { await app.close() })
  t.throws(() => app.route({ method: 'GET', url: '/v1/other', schema: { operationId: 'listOther' }, config: { publicCache: true }, handler: async () => 'x' }),
    { message: 'http-caching: GET /v1/other is publicly cacheable but has no Surrogate-Key tags' })
  // A public answer to a write (the ingest's 201) is not a read: no tags wanted.
  t.doesNotThrow(() => app.route({ method: 'POST', url: '/v1/other', config: { publicCache: true }, handler: async () => 'x' }))
})

t.test('[D70] the contract documents the tag on exactly the public reads', async (t) => {
  const { document } = OpenApiContract.load()
  type Op = { operationId: string, responses: Record<string, { headers?: Record<string, unknown> }> }
  const ops = Object.values(document.paths as Record<string, Record<string, Op>>).flatMap((item) => Object.values(item))
  const documented = ops
    .filter((op) => Object.entries(op.responses).some(([status, r]) => status.startsWith('2') && r.headers?.['Surrogate-Key'] !== undefined))
    .map((op) => op.operationId)
    .sort()
  const publicReads = Object.entries(operations)
    .filter(([, op]) => op.config.publicCache && op.method === 'GET')
    .map(([id]) => id)
    .sort()
  t.strictSame(documented, publicReads)
})

t.test('[D70] a change drops every list and the pages of its cycles, each tag once', async (t) => {
  t.strictSame(changeTags(['2026-10-15', '2026-09-15', '2026-10-15']),
    ['prices', 'latest', 'changes', 'towns', 'cycles', 'feed', 'cycle-2026-10-15', 'cycle-2026-09-15'])
  t.strictSame(changeTags([]), ['prices', 'latest', 'changes', 'towns', 'cycles', 'feed'])
})
