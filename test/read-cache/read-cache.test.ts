import t from '../support/file-test.js'
import type { LatestRecords } from '../../src/db/prices.js'
import { ReadCache } from '../../src/read-cache/read-cache.js'

const cache = (maxBytes: number, loadLatest = async (): Promise<LatestRecords> => []): ReadCache => new ReadCache({ loadLatest, maxBytes })
const json = (n: number): string => JSON.stringify('x'.repeat(n - 2)) // n bytes of JSON

t.test('bodies are kept least-recently-used first within maxBytes (key length counted)', async (t) => {
  const c = cache(300)
  const loads: string[] = []
  const get = async (key: string): Promise<void> => { await c.body(key, async () => { loads.push(key); return json(99) }) }
  await get('a') // 100 bytes with its key
  await get('b')
  await get('c')
  t.equal(c.bytes, 300)
  await get('a') // a is now the most recently used
  await get('d') // over budget: b, the least recently used, goes
  t.equal(c.bytes, 300)
  await get('c')
  await get('a')
  await get('b') // reloaded
  t.strictSame(loads, ['a', 'b', 'c', 'd', 'b'])
  t.equal(c.otherHits, 3)
  t.equal(c.otherMisses, 5)
})

t.test('a body larger than the whole budget is served but not kept', async (t) => {
  const c = cache(50)
  const body = await c.body('big', async () => json(100))
  t.equal(body.bytes.length, 100)
  t.equal(c.bytes, 0)
  await c.body('big', async () => json(100))
  t.equal(c.otherMisses, 2)
})

t.test('concurrent misses share one load; a load that started before clear() is not kept', async (t) => {
  const c = cache(1000)
  let release: (json: string) => void = () => {}
  let loads = 0
  const load = async (): Promise<string> => { loads++; return await new Promise<string>((resolve) => { release = resolve }) }
  const first = c.body('k', load)
  const second = c.body('k', load)
  t.equal(loads, 1, 'one load for two requests')
  c.clear() // an ingest committed while the load was in flight
  release('"stale"')
  t.equal((await first).bytes.toString(), '"stale"')
  t.equal((await second).bytes.toString(), '"stale"')
  t.equal(c.bytes, 0, 'the stale result was not stored')
  const fresh = await c.body('k', async () => '"fresh"')
  t.equal(fresh.bytes.toString(), '"fresh"')
})

t.test('the latest cycle is pinned: no amount of other bodies evicts it, clear() drops it', async (t) => {
  let loads = 0
  const nairobi = '{"id":1,"town":"Nairobi","super_petrol":180.5,"diesel":170,"kerosene":150.25,"valid_from":"2026-10-15","valid_to":"2026-11-14"}'
  const c = cache(200, async () => { loads++; return [{ town: 'Nairobi', json: nairobi }] })
  await c.latest(undefined)
  for (let i = 0; i < 20; i++) await c.body(`k${i}`, async () => json(90))
  t.equal((await c.latest(undefined)).bytes.toString(), `[${nairobi}]`)
  t.equal(loads, 1)
  // Asked by the canonical name, as the route's townFilter gives it (D48).
  t.equal((await c.latest('Nairobi')).bytes.toString(), `[${nairobi}]`)
  t.equal((await c.latest('Nowhere')).bytes.toString(), '[]')
  t.equal(c.latestHits, 3)
  c.clear()
  await c.latest(undefined)
  t.equal(loads, 2)
  t.equal(c.latestMisses, 2)
})

t.test('refreshLatest(): readers overlapping the reload get the previous cycle at once, the new one once it settles', async (t) => {
  const loaded: Array<(records: LatestRecords) => void> = []
  const failed: Array<(err: Error) => void> = []
  const c = cache(1000, async () => await new Promise<LatestRecords>((resolve, reject) => { loaded.push(resolve); failed.push(reject) }))
  const text = async (): Promise<string> => (await c.latest(undefined)).bytes.toString()
  // Settles the i-th load of the latest cycle with Nairobi's record given as `json`, or with an error.
  const land = (i: number, json: string): void => { loaded[i]?.([{ town: 'Nairobi', json }]) }
  const fail = (i: number): void => { failed[i]?.(new Error('database gone')) }
  const first = text()
  land(0, '1')
  t.equal(await first, '[1]')
  await c.body('k', async () => '"page"')

  const refreshed = c.refreshLatest()
  t.equal(loaded.length, 2, 'the reload started at once')
  t.equal(await text(), '[1]', 'a reader during the reload is answered from before the write, without waiting')
  t.equal(c.bytes, 0, 'the other bodies are gone already')
  land(1, '2')
  await refreshed
  t.equal(await text(), '[2]', 'once it settled, the new cycle answers')
  t.equal(loaded.length, 2, 'with no load of its own')

  const failing = c.refreshLatest()
  fail(2)
  await failing // the write had committed: its answer does not fail for the cache
  const next = text()
  t.equal(loaded.length, 4, 'after a failed reload nothing from before is served: the next reader loads')
  land(3, '3')
  t.equal(await next, '[3]')

  const overtaken = c.refreshLatest()
  c.clear() // another replica's write was announced while the reload ran
  land(4, 'stale')
  await overtaken
  const after = text()
  t.equal(loaded.length, 6, 'the overtaken reload is not kept')
  land(5, '5')
  t.equal(await after, '[5]')
})
