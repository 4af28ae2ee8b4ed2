import { once } from 'node:events'
import t from '../support/file-test.js'
import { createRedisClient } from '../../src/rate-limit/redis-client.js'
import { RedisSlidingWindowStore } from '../../src/rate-limit/redis-store.js'
import { MemorySlidingWindowStore } from '../../src/rate-limit/memory-store.js'
import { clientKey } from '../../src/rate-limit/sliding-window.js'
import { HEADER, csv, upload } from '../fixtures/ingest.js'
import { build } from '../helper.js'
import { TEST_REDIS_URL, needs } from '../services.js'

/**
 * D48: a client key is an IP address (at most 45 characters) or the socket's address, so a flood
 * of forged multi-kilobyte X-Forwarded-For values holds one key, in memory and in Redis; and a
 * refused ingest counts against the allowance before its token is checked.
 */
const LONG = (i: number): string => `${i}-${'x'.repeat(8 * 1024)}`

t.test('clientKey: an IP address, else the socket address', async (t) => {
  t.equal(clientKey('203.0.113.9', '10.0.0.1'), '203.0.113.9')
  t.equal(clientKey('2001:db8::1', '10.0.0.1'), '2001:db8::1')
  t.equal(clientKey('ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255', '10.0.0.1'), 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255')
  t.equal(clientKey('x'.repeat(8192), '10.0.0.1'), '10.0.0.1')
  t.equal(clientKey('203.0.113.9, 10.0.0.2', '10.0.0.1'), '10.0.0.1')
  t.equal(clientKey(undefined, undefined), 'unknown')
})

t.test('memory store: 2,000 forged 8 KB addresses hold one key', async (t) => {
  const store = new MemorySlidingWindowStore()
  const app = await build(t, { rateLimitStore: store })
  const statuses = new Map<number, number>()
  for (let i = 0; i < 2000; i++) {
    const res = await app.inject({ url: '/v1/towns', headers: { 'x-forwarded-for': LONG(i) } })
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
  }
  t.equal(store.size, 1, 'one key: the socket address')
  t.same(Object.fromEntries(statuses), { 200: 60, 429: 1940 }, 'and one allowance for all of them')
})

t.test('Redis store: forged 8 KB addresses hold one short key', await needs('redis'), async (t) => {
  const prefix = `bounded-${process.pid}-${Date.now()}:`
  const redis = createRedisClient(TEST_REDIS_URL)
  if (redis.status !== 'ready') await once(redis, 'ready')
  const store = new RedisSlidingWindowStore({ redis, prefix })
  const app = await build(t, { rateLimitStore: store })
  for (let i = 0; i < 300; i++) await app.inject({ url: '/v1/towns', headers: { 'x-forwarded-for': LONG(i) } })
  const admin = createRedisClient(TEST_REDIS_URL)
  if (admin.status !== 'ready') await once(admin, 'ready')
  t.teardown(async () => { await admin.quit() })
  const [, keys] = await admin.scan('0', 'MATCH', `${prefix}*`, 'COUNT', 10_000)
  t.same(keys, [`${prefix}127.0.0.1`], 'one key, the socket address')
  t.ok(((await admin.memory('USAGE', keys[0] as string)) ?? Infinity) < 16 * 1024, 'holding 60 entries, not 300 addresses of 8 KB')
  await admin.del(...keys)
})

t.test('every ingest attempt counts before its token is checked', async (t) => {
  const app = await build(t, { rateLimitMax: 5, config: { ingestToken: 'right-token' } })
  const body = csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.00,170.00,160.00')
  const statuses: number[] = []
  for (let i = 0; i < 7; i++) statuses.push((await upload(app, body, { authorization: 'Bearer wrong' })).statusCode)
  t.same(statuses, [401, 401, 401, 401, 401, 429, 429], 'wrong tokens use up the allowance, then 429')
  const right = await upload(app, body, { authorization: 'Bearer right-token' })
  t.equal(right.statusCode, 429, 'the right token waits like anyone else')
  t.equal(right.headers['ratelimit-remaining'], '0')
})
