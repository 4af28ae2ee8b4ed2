import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import type { FastifyBaseLogger } from 'fastify'
import t from '../support/file-test.js'
import { FailedTokenBudget, TOO_MANY_FAILED_TOKENS } from '../../src/auth/failed-tokens.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { HttpError } from '../../src/http-server/http-error.js'
import { AUTH, HEADER, TOKEN, csv, rowCount } from '../fixtures/ingest.js'
import { build } from '../helper.js'
import { seedFixture } from '../routes/_fixtures.js'

/**
 * D65: wrong bearer tokens share one allowance per process, whatever address each request
 * claims (the left-most X-Forwarded-For is the client's to forge, D23): past it a wrong token is
 * a 429 while the right one still works, and the burst is logged once.
 */

const BURST_LINE = /^more than \d+ wrong bearer tokens in 60 s from all clients/
const METRICS_TOKEN = 'metrics-token'

t.beforeEach(seedFixture)

t.test('[D65] AUTH_FAILURES_PER_MINUTE: 30 by default, a positive integer', async (t) => {
  t.equal(loadConfig({}).authFailuresPerMinute, 30)
  t.equal(loadConfig({ AUTH_FAILURES_PER_MINUTE: '5' }).authFailuresPerMinute, 5)
  t.throws(() => loadConfig({ AUTH_FAILURES_PER_MINUTE: '0' }), ConfigError)
})

t.test('[D65] 100 wrong tokens from 100 addresses over the four protected routes: 30 × 401, then 429; the right token still works; one log line', async (t) => {
  const lines: Array<{ level: number, msg: string }> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = await build(t, {
    config: { ingestToken: TOKEN, metricsToken: METRICS_TOKEN, authFailuresPerMinute: 30 },
    rateLimitMax: 60, // each forged address makes one request: the per-address limit never sees them
    logger: { level: 'info', stream }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const file = csv(HEADER, '15-11-2026,14-12-2026,Nairobi,181.00,171.00,151.00')
  const form = (): FormData => {
    const body = new FormData()
    body.append('file', new Blob([file], { type: 'text/csv' }), 'prices.csv')
    return body
  }
  const routes = [
    async (headers: Record<string, string>) => await fetch(`${base}/v1/ingest/csv`, { method: 'POST', headers, body: form() }),
    async (headers: Record<string, string>) => await fetch(`${base}/v1/ingest/csv/dry-run`, { method: 'POST', headers, body: form() }),
    async (headers: Record<string, string>) => await fetch(`${base}/v1/cycles/2026-10-15`, { method: 'DELETE', headers }),
    async (headers: Record<string, string>) => await fetch(`${base}/metrics`, { headers })
  ]

  const statuses: number[] = []
  for (let i = 0; i < 100; i++) {
    const res = await (routes[i % 4] as typeof routes[0])({ authorization: `Bearer guess-${i}`, 'x-forwarded-for': `198.51.100.${i}` })
    statuses.push(res.status)
    const body = await res.json() as { detail: string }
    if (res.status === 429) {
      t.strictSame(body, { detail: TOO_MANY_FAILED_TOKENS }, `guess ${i}`)
      const retryAfter = Number(res.headers.get('retry-after'))
      t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `guess ${i}: Retry-After ${retryAfter}`)
      t.equal(res.headers.get('cache-control'), 'no-store')
      t.equal(res.headers.get('www-authenticate'), null, 'a 429 asks for no credentials')
    } else {
      t.equal(res.status, 401)
    }
  }
  t.strictSame(statuses, [...Array(30).fill(401), ...Array(70).fill(429)])
  t.equal(TOO_MANY_FAILED_TOKENS, 'Too many wrong authorization tokens. Try again later.')
  t.equal(await rowCount(), 15, 'nothing was written or withdrawn')

  // The right token, from one more address, on every route, while wrong ones are still refused.
  const right = { 'x-forwarded-for': '203.0.113.7' }
  t.equal((await routes[1]!({ ...AUTH, ...right })).status, 200, 'dry run')
  t.equal((await routes[0]!({ ...AUTH, ...right })).status, 201, 'ingest')
  t.equal((await routes[2]!({ ...AUTH, ...right })).status, 200, 'withdrawal')
  t.equal((await routes[3]!({ authorization: `Bearer ${METRICS_TOKEN}`, ...right })).status, 200, 'metrics')
  t.equal((await routes[3]!({ authorization: 'Bearer one-more-guess', ...right })).status, 429, 'a right token does not refill the allowance')

  const burst = lines.filter((l) => BURST_LINE.test(l.msg))
  t.equal(burst.length, 1, 'one line for the burst')
  t.equal(burst[0]?.level, 40, 'at warn')
  t.equal(burst[0]?.msg, 'more than 30 wrong bearer tokens in 60 s from all clients: further wrong tokens answer 429 until the count falls')
})

t.test('[D65] the allowance slides: wrong tokens are 401 again once old ones leave the minute; a new burst is a new line', async (t) => {
  let now = 1_000_000
  const logged: string[] = []
  const log = { warn: (_fields: object, msg: string) => { logged.push(msg) } } as unknown as FastifyBaseLogger
  const budget = new FailedTokenBudget({ perMinute: 3, log, now: () => now })
  const unauthorized = (): HttpError => new HttpError(401, 'wrong')
  const answer = (): string => {
    const error = budget.refusal(unauthorized)
    return `${error.statusCode}${error.headers['retry-after'] === undefined ? '' : ` ${error.headers['retry-after']}`}`
  }

  t.strictSame([answer(), answer(), answer(), answer()], ['401', '401', '401', '429 60'])
  t.equal(logged.length, 1)
  now += 10_000
  t.equal(answer(), '429 50', 'Retry-After: until the oldest wrong token leaves the minute')
  t.equal(logged.length, 1, 'the same burst is not logged again')
  now += 50_001
  t.strictSame([answer(), answer(), answer(), answer()], ['401', '401', '401', '429 60'])
  t.equal(logged.length, 1, 'refusals less than a minute apart are one burst')
  now += 120_000
  t.strictSame([answer(), answer(), answer(), answer()], ['401', '401', '401', '429 60'])
  t.equal(logged.length, 2, 'after a quiet minute, a new burst: a new line')
})
