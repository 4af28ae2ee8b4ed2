import type { Test } from 'tap'
import t from '../support/file-test.js'
import net from 'node:net'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Redis } from 'ioredis'
import { DEFAULT_MAX_KEYS, MemorySlidingWindowStore } from '../../src/rate-limit/memory-store.js'
import { RedisSlidingWindowStore } from '../../src/rate-limit/redis-store.js'
import type { SlidingWindowStore } from '../../src/rate-limit/sliding-window.js'
import { createRedisClient } from '../../src/rate-limit/redis-client.js'
import { TEST_REDIS_URL, needs } from '../services.js'

const T0 = 1_700_000_000_000
/** One prefix per run, so parallel runs never share keys; everything under it is deleted at the end. */
const RUN_PREFIX = `test:ratelimit:${process.pid}:${randomBytes(4).toString('hex')}:`

interface Clock { now: number }
type StoreFactory = (t: Tap, clock: Clock) => Promise<SlidingWindowStore>
type Tap = Test

/** With `enableOfflineQueue: false` a command sent before the connection is ready fails (open). */
async function ready (redis: Redis): Promise<void> {
  if (redis.status !== 'ready') await once(redis, 'ready')
}

async function deleteKeys (redis: Redis, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    if (keys.length > 0) await redis.del(...keys)
    cursor = next
  } while (cursor !== '0')
}

async function hitTimes (store: SlidingWindowStore, key: string, n: number) {
  const results = []
  for (let i = 0; i < n; i++) results.push(await store.hit(key))
  return results
}

/** The D22 contract, one body for every implementation. */
function slidingLogBehaviour (t: Tap, makeStore: StoreFactory): void {
  t.test('D22: 60 requests in the window are allowed, the 61st is rejected', async (t) => {
    const clock = { now: T0 }
    const store = await makeStore(t, clock)
    const results = await hitTimes(store, 'a', 60)
    t.strictSame(results.map((r) => r.allowed), Array(60).fill(true))
    t.strictSame(results.map((r) => r.remaining), Array.from({ length: 60 }, (_, i) => 59 - i))
    t.strictSame(results.map((r) => r.resetMs), Array(60).fill(60_000))
    t.strictSame(await store.hit('a'), { allowed: false, remaining: 0, resetMs: 60_000 })
  })

  t.test('D22: remaining is 59 after a first request, resetMs counts down to the oldest leaving', async (t) => {
    const clock = { now: T0 }
    const store = await makeStore(t, clock)
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 59, resetMs: 60_000 })
    clock.now = T0 + 1_500
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 58, resetMs: 58_500 })
    clock.now = T0 + 59_999
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 57, resetMs: 1 })
    clock.now = T0 + 60_000 // the first request has left the window: the second is now oldest
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 57, resetMs: 1_500 })
  })

  t.test('D22: rejected requests are not recorded and do not extend the block', async (t) => {
    const clock = { now: T0 }
    const store = await makeStore(t, clock)
    await store.hit('a')
    clock.now = T0 + 10_000
    await hitTimes(store, 'a', 59)
    clock.now = T0 + 20_000
    const hammered = await hitTimes(store, 'a', 100)
    t.strictSame(hammered.filter((r) => r.allowed), [])
    t.strictSame(hammered[0], { allowed: false, remaining: 0, resetMs: 40_000 })
    clock.now = T0 + 59_999
    t.strictSame(await store.hit('a'), { allowed: false, remaining: 0, resetMs: 1 })
    // The oldest allowed request (T0) leaves: exactly one slot frees, whatever was hammered.
    clock.now = T0 + 60_000
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 0, resetMs: 10_000 })
    t.strictSame(await store.hit('a'), { allowed: false, remaining: 0, resetMs: 10_000 })
    // The 59 requests of T0+10s leave: 59 slots free, the one taken at T0+60s still counts.
    clock.now = T0 + 70_000
    const after = await hitTimes(store, 'a', 60)
    t.equal(after.filter((r) => r.allowed).length, 59)
    t.strictSame(after[58], { allowed: true, remaining: 0, resetMs: 50_000 })
    t.strictSame(after[59], { allowed: false, remaining: 0, resetMs: 50_000 })
  })

  t.test('D22: the window slides (requests either side of a minute boundary share one window)', async (t) => {
    const clock = { now: T0 + 50_000 }
    const store = await makeStore(t, clock)
    t.equal((await hitTimes(store, 'a', 30)).filter((r) => r.allowed).length, 30)
    clock.now = T0 + 70_000
    const second = await hitTimes(store, 'a', 30)
    t.equal(second.filter((r) => r.allowed).length, 30)
    t.strictSame(second[29], { allowed: true, remaining: 0, resetMs: 40_000 })
    // A fixed window starting at T0+60s would hold only 30 here and allow this request.
    clock.now = T0 + 75_000
    t.strictSame(await store.hit('a'), { allowed: false, remaining: 0, resetMs: 35_000 })
    // The 30 of T0+50s have left; the 30 of T0+70s still count.
    clock.now = T0 + 110_000
    const third = await hitTimes(store, 'a', 31)
    t.equal(third.filter((r) => r.allowed).length, 30)
    t.strictSame(third[0], { allowed: true, remaining: 29, resetMs: 20_000 })
    t.strictSame(third[30], { allowed: false, remaining: 0, resetMs: 20_000 })
  })

  t.test('D22: separate keys have independent allowances', async (t) => {
    const clock = { now: T0 }
    const store = await makeStore(t, clock)
    await hitTimes(store, '1.2.3.4', 60)
    t.equal((await store.hit('1.2.3.4')).allowed, false)
    t.strictSame(await store.hit('5.6.7.8'), { allowed: true, remaining: 59, resetMs: 60_000 })
    t.strictSame(await store.hit('2001:db8::1'), { allowed: true, remaining: 59, resetMs: 60_000 })
    t.equal((await store.hit('1.2.3.4')).allowed, false)
  })
}

t.test('MemorySlidingWindowStore', async (t) => {
  slidingLogBehaviour(t, async (_t, clock) => new MemorySlidingWindowStore({ now: () => clock.now }))

  t.test('D22: a flood of one million distinct keys leaves exactly maxKeys entries', async (t) => {
    const store = new MemorySlidingWindowStore({ now: () => T0 })
    t.equal(store.maxKeys, DEFAULT_MAX_KEYS)
    for (let i = 0; i < 1_000_000; i++) {
      store.hitSync(`10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}/${i >>> 24}`)
    }
    t.equal(store.size, DEFAULT_MAX_KEYS)
    // The newest keys survive with their counts; the oldest were evicted.
    t.strictSame(store.hitSync('10.15.66.63/0'), { allowed: true, remaining: 58, resetMs: 60_000 })
    t.strictSame(store.hitSync('10.0.0.0/0'), { allowed: true, remaining: 59, resetMs: 60_000 })
    t.equal(store.size, DEFAULT_MAX_KEYS)
  })

  t.test('D22: the least recently seen key is evicted first', async (t) => {
    const store = new MemorySlidingWindowStore({ maxKeys: 3, now: () => T0 })
    store.hitSync('a')
    store.hitSync('b')
    store.hitSync('c')
    store.hitSync('a') // a is now the most recently seen; b the least
    store.hitSync('d')
    t.equal(store.size, 3)
    t.equal(store.hitSync('a').remaining, 57) // kept: its third request
    t.equal(store.hitSync('c').remaining, 58) // kept
    t.equal(store.size, 3)
    t.equal(store.hitSync('b').remaining, 59) // evicted earlier: a fresh allowance
  })

  t.test('D22: keys whose requests have all left the window are swept', async (t) => {
    const clock = { now: T0 }
    const store = new MemorySlidingWindowStore({ now: () => clock.now })
    for (let i = 0; i < 50; i++) store.hitSync(`old-${i}`)
    clock.now = T0 + 30_000
    store.hitSync('recent')
    t.equal(store.size, 51)
    clock.now = T0 + 60_000 // the old keys' last hits are now exactly one window old
    store.hitSync('new')
    t.equal(store.size, 2)
  })

  t.test('D22: a key given an evicted key\'s place starts with a full allowance, its own log only', async (t) => {
    const clock = { now: T0 }
    const store = new MemorySlidingWindowStore({ max: 5, maxKeys: 2, now: () => clock.now })
    for (let i = 0; i < 4; i++) { clock.now += 1000; store.hitSync('busy') } // a log of four times
    clock.now += 1000
    store.hitSync('quiet')
    store.hitSync('new') // busy, the least recently seen, makes way
    t.equal(store.size, 2)
    t.strictSame(store.hitSync('new'), { allowed: true, remaining: 3, resetMs: 60_000 })
    t.strictSame(store.hitSync('busy'), { allowed: true, remaining: 4, resetMs: 60_000 }, 'evicted: a fresh allowance')
    clock.now += 30_000
    t.strictSame(store.hitSync('busy'), { allowed: true, remaining: 3, resetMs: 30_000 })
  })

  t.test('D22: a log back to one time in the window counts on from it', async (t) => {
    const clock = { now: T0 }
    const store = new MemorySlidingWindowStore({ max: 3, now: () => clock.now })
    store.hitSync('a')
    clock.now += 40_000
    store.hitSync('a')
    clock.now += 30_000 // the first left the window; the second is 30 s old
    t.strictSame(store.hitSync('a'), { allowed: true, remaining: 1, resetMs: 30_000 })
    t.strictSame(store.hitSync('a'), { allowed: true, remaining: 0, resetMs: 30_000 })
    t.strictSame(store.hitSync('a'), { allowed: false, remaining: 0, resetMs: 30_000 })
    clock.now += 30_000
    t.strictSame(store.hitSync('a'), { allowed: true, remaining: 0, resetMs: 30_000 }, 'the oldest left: two 30 s old and this one')
  })

  t.test('with one request allowed, the second in the window is refused until the first leaves', async (t) => {
    const clock = { now: T0 }
    const store = new MemorySlidingWindowStore({ max: 1, now: () => clock.now })
    t.strictSame(store.hitSync('a'), { allowed: true, remaining: 0, resetMs: 60_000 })
    clock.now += 20_000
    t.strictSame(store.hitSync('a'), { allowed: false, remaining: 0, resetMs: 40_000 })
    clock.now += 40_000
    t.strictSame(store.hitSync('a'), { allowed: true, remaining: 0, resetMs: 60_000 })
  })

  t.test('100,000 keys, as a flood of fresh addresses leaves them, hold under 12 MB of heap', async (t) => {
    // About 200 bytes a key when each had an object, an array and a boxed time: 19.5 MB.
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    gc()
    const before = process.memoryUsage().heapUsed
    const store = new MemorySlidingWindowStore({ now: () => T0 })
    for (let i = 0; i < DEFAULT_MAX_KEYS; i++) store.hitSync(`10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`)
    gc()
    const used = process.memoryUsage().heapUsed - before
    t.equal(store.size, DEFAULT_MAX_KEYS)
    t.ok(used < 12 * 1024 * 1024, `${(used / 1024 / 1024).toFixed(1)} MB`)
  })

  t.test('rejects a non-positive limit', async (t) => {
    t.throws(() => new MemorySlidingWindowStore({ max: 0 }), RangeError)
    t.throws(() => new MemorySlidingWindowStore({ maxKeys: 1.5 }), RangeError)
  })
})

t.test('RedisSlidingWindowStore', await needs('redis'), async (t) => {
  const admin = createRedisClient(TEST_REDIS_URL)
  await ready(admin)
  t.teardown(async () => {
    await deleteKeys(admin, RUN_PREFIX)
    await admin.quit()
  })
  let storeCount = 0
  const makeRedisStore = async (t: Tap, options: { now?: () => number, prefix?: string } = {}) => {
    const redis = createRedisClient(TEST_REDIS_URL)
    await ready(redis)
    const store = new RedisSlidingWindowStore({ redis, prefix: options.prefix ?? `${RUN_PREFIX}${++storeCount}:`, now: options.now })
    t.teardown(() => store.close())
    return store
  }

  slidingLogBehaviour(t, async (t, clock) => makeRedisStore(t, { now: () => clock.now }))

  t.test('D22: replicas sharing one Redis share one allowance', async (t) => {
    const clock = { now: T0 }
    const prefix = `${RUN_PREFIX}shared:`
    const replicaA = await makeRedisStore(t, { now: () => clock.now, prefix })
    const replicaB = await makeRedisStore(t, { now: () => clock.now, prefix })
    for (let i = 0; i < 30; i++) {
      t.equal((await replicaA.hit('1.2.3.4')).allowed, true)
      t.equal((await replicaB.hit('1.2.3.4')).allowed, true)
    }
    t.strictSame(await replicaA.hit('1.2.3.4'), { allowed: false, remaining: 0, resetMs: 60_000 })
    t.strictSame(await replicaB.hit('1.2.3.4'), { allowed: false, remaining: 0, resetMs: 60_000 })
  })

  t.test('D22: concurrent hits never take more than 60 slots (the script is atomic)', async (t) => {
    const store = await makeRedisStore(t, { now: () => T0 })
    const results = await Promise.all(Array.from({ length: 100 }, () => store.hit('burst')))
    t.equal(results.filter((r) => r.allowed).length, 60)
  })

  t.test('without an injected clock the window runs on Redis TIME', async (t) => {
    const store = await makeRedisStore(t)
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 59, resetMs: 60_000 })
  })

  t.test('D22: the key expires with its newest allowed request; rejections do not renew it', async (t) => {
    const prefix = `${RUN_PREFIX}ttl:`
    const store = await makeRedisStore(t, { prefix })
    await hitTimes(store, 'a', 60)
    const ttlAfterLastAllowed = await admin.pttl(`${prefix}a`)
    t.ok(ttlAfterLastAllowed > 59_000 && ttlAfterLastAllowed <= 60_000, `pttl ${ttlAfterLastAllowed}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
    t.equal((await store.hit('a')).allowed, false)
    const ttlAfterRejection = await admin.pttl(`${prefix}a`)
    t.ok(ttlAfterRejection <= ttlAfterLastAllowed - 40, `pttl ${ttlAfterRejection} after ${ttlAfterLastAllowed}`)
    t.equal(await admin.zcard(`${prefix}a`), 60)
  })

  t.test('fails open when Redis is unreachable, reporting once per outage', async (t) => {
    const errors: unknown[] = []
    const redis = createRedisClient('redis://127.0.0.1:1')
    const store = new RedisSlidingWindowStore({ redis, prefix: RUN_PREFIX, onError: (err) => errors.push(err) })
    t.teardown(() => store.close())
    const started = Date.now()
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 59, resetMs: 60_000 })
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 59, resetMs: 60_000 })
    // Queued, they would wait for the 500 ms command timeout; the bound leaves a loaded machine room.
    t.ok(Date.now() - started < 400, `answers at once: nothing waits in an offline queue (${Date.now() - started} ms)`)
    await new Promise((resolve) => setTimeout(resolve, 300)) // a few reconnect attempts fail too
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 59, resetMs: 60_000 })
    t.equal(errors.length, 1)
    t.ok(errors[0] instanceof Error)
  })

  t.test('recovers by itself when Redis comes back, and fails open while Redis hangs', async (t) => {
    const proxy = await startProxy(TEST_REDIS_URL)
    t.teardown(() => proxy.close())
    await proxy.stop() // Redis "down": the port refuses connections
    const errors: unknown[] = []
    let recoveries = 0
    const redis = createRedisClient(`redis://127.0.0.1:${proxy.port}`)
    const store = new RedisSlidingWindowStore({
      redis,
      prefix: `${RUN_PREFIX}recover:`,
      now: () => T0,
      onError: (err) => errors.push(err),
      onRecover: () => recoveries++
    })
    t.teardown(() => store.close())
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 59, resetMs: 60_000 })
    t.equal(errors.length, 1)

    await proxy.start() // Redis "back": ioredis reconnects on its own (retry every ≤ 2 s)
    await ready(redis)
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 59, resetMs: 60_000 })
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 58, resetMs: 60_000 })
    t.equal(recoveries, 1)
    t.equal(errors.length, 1)

    proxy.freeze() // connected but silent: commandTimeout (500 ms) bounds the wait
    const started = Date.now()
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 59, resetMs: 60_000 })
    const waited = Date.now() - started
    t.ok(waited >= 400 && waited < 1_500, `waited ${waited} ms`)
    t.equal(errors.length, 2, 'a second outage is reported once more')
  })

  t.test('D47: a hung Redis costs a few timeouts, then the circuit opens until a probe answers', async (t) => {
    const proxy = await startProxy(TEST_REDIS_URL)
    t.teardown(() => proxy.close())
    let recoveries = 0
    const redis = createRedisClient(`redis://127.0.0.1:${proxy.port}`)
    await ready(redis)
    const store = new RedisSlidingWindowStore({ redis, prefix: `${RUN_PREFIX}breaker:`, now: () => T0, probeIntervalMs: 200, onRecover: () => recoveries++ })
    t.teardown(() => store.close())
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 59, resetMs: 60_000 })
    proxy.freeze()
    for (let i = 0; i < 3; i++) {
      const started = Date.now()
      t.strictSame(await store.hit('a'), { allowed: true, remaining: 59, resetMs: 60_000 }, 'fails open')
      t.ok(Date.now() - started >= 400, `failure ${i + 1} waits for the command timeout`)
    }
    t.equal(store.open, true, 'three timeouts in a row open the circuit')
    // Each hit answers without waiting for a command timeout (500 ms); that none of them reached
    // Redis is shown by the count after the thaw. A bound on the slowest hit, not on the sum, so a
    // loaded machine cannot fail it (the sum of 100 once took 107 ms under coverage in CI).
    let slowest = 0
    for (let i = 0; i < 100; i++) {
      const started = Date.now()
      t.strictSame(await store.hit('a'), { allowed: true, remaining: 59, resetMs: 60_000 })
      slowest = Math.max(slowest, Date.now() - started)
    }
    t.ok(slowest < 250, `then 100 hits answer at once, none waiting for the timeout (slowest ${slowest} ms)`)
    t.equal(recoveries, 0)
    proxy.thaw()
    for (let i = 0; i < 50 && store.open; i++) await new Promise((resolve) => setTimeout(resolve, 100))
    t.equal(store.open, false, 'a background probe closes the circuit once Redis answers')
    t.equal(recoveries, 1, 'and the recovery is reported once')
    // Redis ran the three held hits when it woke (1 + 3 + this one).
    t.strictSame(await store.hit('a'), { allowed: true, remaining: 55, resetMs: 60_000 }, 'hits count in Redis again')
  })
})

/** A TCP relay in front of Redis that can refuse connections or hold everything sent back. */
async function startProxy (redisUrl: string) {
  const target = new URL(redisUrl)
  const sockets = new Set<net.Socket>()
  let frozen = false
  let server: net.Server | undefined
  let port = 0

  const listen = async () => {
    server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname)
      for (const s of [client, upstream]) {
        sockets.add(s)
        s.on('close', () => sockets.delete(s))
        s.on('error', () => {})
      }
      if (frozen) client.pause()
      client.on('data', (chunk) => upstream.write(chunk))
      upstream.on('data', (chunk) => client.write(chunk))
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
    })
    server.listen(port, '127.0.0.1')
    await once(server, 'listening')
    port = (server.address() as net.AddressInfo).port
  }
  const stop = async () => {
    for (const s of sockets) s.destroy()
    if (server !== undefined) await new Promise((resolve) => server?.close(resolve))
    server = undefined
  }
  await listen()
  return {
    get port () { return port },
    start: listen,
    stop,
    close: stop,
    // Like a Redis stopped with SIGSTOP: what is sent waits, and is answered in order once thawed.
    freeze: () => { frozen = true; for (const s of sockets) s.pause() },
    thaw: () => { frozen = false; for (const s of sockets) s.resume() }
  }
}
