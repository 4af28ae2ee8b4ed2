import { once } from 'node:events'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import t from './support/file-test.js'
import { chromiumUnavailable, needs, postgresUnavailable, ptyUnavailable, redisUnavailable, TEST_POSTGRES_URL, TEST_REDIS_URL, varnishdUnavailable } from './services.js'

/** D34: the probe behind every Redis or Chromium test answers within 2 s, with a reason. */

/** A port on which nothing listens: bound, then released. */
async function closedPort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

t.test('[D34] nothing listening: the reason names the address and the error', async (t) => {
  const port = await closedPort()
  t.equal(await redisUnavailable(`redis://127.0.0.1:${port}`), `Redis is not reachable at 127.0.0.1:${port} (ECONNREFUSED)`)
})

t.test('[D34] a server that accepts but never answers is given up on after the timeout', async (t) => {
  const sockets: Socket[] = []
  const silent = createServer((socket) => { sockets.push(socket) })
  silent.listen(0, '127.0.0.1')
  await once(silent, 'listening')
  t.teardown(() => { for (const s of sockets) s.destroy(); silent.close() })
  const { port } = silent.address() as AddressInfo
  t.equal(await redisUnavailable(`redis://127.0.0.1:${port}`, 300), `Redis at 127.0.0.1:${port} did not answer PING within 300 ms`)
})

t.test('[D34] a probe whose file holds the event loop past the timeout still finds the service that answered', async (t) => {
  // Redis's PING and PostgreSQL's accept both wait behind 600 ms of synchronous work, twice the
  // probes' 300 ms: the answer is there to read when the loop comes back, so it is no reason.
  const sockets: Socket[] = []
  const redis = createServer((socket) => { sockets.push(socket); socket.on('data', () => socket.write('+PONG\r\n')) })
  redis.listen(0, '127.0.0.1')
  await once(redis, 'listening')
  t.teardown(() => { for (const s of sockets) s.destroy(); redis.close() })
  const { port } = redis.address() as AddressInfo
  const holdLoop = (ms: number): void => { const until = Date.now() + ms; while (Date.now() < until); }
  const ping = redisUnavailable(`redis://127.0.0.1:${port}`, 300)
  holdLoop(600)
  t.equal(await ping, undefined)
  const accept = postgresUnavailable(`postgres://postgres@127.0.0.1:${port}/x`, 300)
  holdLoop(600)
  t.equal(await accept, undefined)
})

t.test('[D34] PostgreSQL: nothing listening is named; the real server of TEST_POSTGRES_URL accepts', async (t) => {
  const port = await closedPort()
  t.equal(await postgresUnavailable(`postgres://postgres@127.0.0.1:${port}/x`), `PostgreSQL is not reachable at 127.0.0.1:${port} (ECONNREFUSED)`)
  t.test('the real one', await needs('postgres'), async (t) => {
    t.equal(await postgresUnavailable(TEST_POSTGRES_URL), undefined)
  })
})

t.test('[D34] a URL that is not one is a reason too', async (t) => {
  t.equal(await redisUnavailable('not a url'), 'TEST_REDIS_URL is not a URL: not a url')
})

t.test('[D34] Chromium: a missing executable is named', async (t) => {
  t.equal(chromiumUnavailable('/nonexistent/chromium'), 'Chromium not found at /nonexistent/chromium (set CHROMIUM_PATH)')
  t.equal(chromiumUnavailable(process.execPath), undefined, 'any executable file passes the probe')
})

t.test('[D34] Varnish: a missing varnishd is named', async (t) => {
  t.equal(varnishdUnavailable('/nonexistent/varnishd'), 'varnishd not found at /nonexistent/varnishd (apt-get install varnish, or set VARNISHD_PATH)')
  t.equal(varnishdUnavailable(process.execPath), undefined, 'any executable file passes the probe')
})

t.test('[D34] the real Redis of TEST_REDIS_URL answers PING', await needs('redis'), async (t) => {
  t.equal(await redisUnavailable(TEST_REDIS_URL), undefined)
})

t.test('[D34] a pseudo-terminal: a missing python3 is named; the real one opens a terminal', async (t) => {
  t.equal(ptyUnavailable('/nonexistent/python3'), '/nonexistent/python3 not found to give a process a pseudo-terminal (set PYTHON)')
  t.test('the real one', await needs('pty'), async (t) => {
    t.equal(ptyUnavailable(), undefined)
  })
})
