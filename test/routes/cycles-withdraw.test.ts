import type { AddressInfo } from 'node:net'
import t from '../support/file-test.js'
import { AUTH, TOKEN, storedRows } from '../fixtures/ingest.js'
import { build } from '../helper.js'
import { seedFixture, STORED } from './_fixtures.js'
import { INVALID_WITHDRAW_TOKEN } from '../../src/routes/cycles/withdraw.js'

// The fixture: cycles 2026-08-15, 2026-09-15 and 2026-10-15 (the latest) of five towns.
t.beforeEach(seedFixture)

const withdraw = (validFrom: string, headers: Record<string, string> = AUTH): { method: 'DELETE', url: string, headers: Record<string, string> } =>
  ({ method: 'DELETE', url: `/v1/cycles/${validFrom}`, headers })

t.test('[D54] DELETE /v1/cycles/{valid_from}: the cycle\'s rows go in one answer saying how many', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const res = await app.inject(withdraw('2026-10-15'))
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  t.strictSame(res.json(), { status: 'withdrawn', valid_from: '2026-10-15', valid_to: '2026-11-14', rows_removed: 5 })
  t.strictSame((await storedRows()).map((r) => r.valid_from).filter((v, i, all) => all.indexOf(v) === i), ['2026-08-15', '2026-09-15'])
  t.equal((await app.inject('/v1/cycles/2026-10-15')).statusCode, 404)
  t.strictSame((await app.inject('/v1/cycles')).json().map((c: { valid_from: string }) => c.valid_from), ['2026-09-15', '2026-08-15'])

  const again = await app.inject(withdraw('2026-10-15'))
  t.equal(again.statusCode, 404, 'a withdrawn cycle is unknown')
  t.strictSame(again.json(), { detail: 'No cycle starts on 2026-10-15.' })
})

t.test('[D54] the read cache is cleared: latest, the cycle list and the cycle itself stop showing it', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  // Fill the cache with answers that hold the cycle.
  t.equal((await app.inject('/v1/prices/latest')).json()[0].valid_from, '2026-10-15')
  t.equal((await app.inject('/v1/cycles')).json().length, 3)
  t.equal((await app.inject('/v1/cycles/2026-10-15')).statusCode, 200)
  t.equal((await app.inject(withdraw('2026-10-15'))).statusCode, 200)
  const latest = (await app.inject('/v1/prices/latest')).json() as Array<{ valid_from: string }>
  t.strictSame([...new Set(latest.map((p) => p.valid_from))], ['2026-09-15'], 'latest is the cycle before')
  t.equal((await app.inject('/v1/cycles')).json().length, 2)
  t.equal((await app.inject('/v1/cycles/2026-10-15')).statusCode, 404)
})

t.test('[D54] an unknown cycle is a 404 and removes nothing; a day that is not a date is a 422', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const before = await storedRows()
  const unknown = await app.inject(withdraw('2026-11-15'))
  t.equal(unknown.statusCode, 404)
  t.strictSame(unknown.json(), { detail: 'No cycle starts on 2026-11-15.' })
  t.equal(unknown.headers['cache-control'], 'no-store')
  t.equal((await app.inject(withdraw('2026-10-16'))).statusCode, 404, 'a day inside a cycle is not its start')

  const bad = await app.inject(withdraw('15-10-2026'))
  t.equal(bad.statusCode, 422)
  t.match(bad.json(), { detail: [{ loc: ['path', 'valid_from'] }] })
  t.equal(bad.headers['cache-control'], 'no-store')
  t.equal((await app.inject(withdraw('2026-02-30'))).statusCode, 422)
  t.strictSame(await storedRows(), before)
})

t.test('[D54] the ingest token: missing or wrong is a 401 before anything is looked at, and nothing goes', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const before = await storedRows()
  const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong' }, { authorization: `Basic ${TOKEN}` }]
  for (const headers of attempts) {
    const res = await app.inject(withdraw('2026-10-15', headers))
    t.equal(res.statusCode, 401)
    t.strictSame(res.json(), { detail: INVALID_WITHDRAW_TOKEN })
    t.equal(res.headers['www-authenticate'], 'Bearer')
    t.equal(res.headers['cache-control'], 'no-store')
  }
  t.equal((await app.inject(withdraw('not-a-date', {}))).statusCode, 401, 'the token is checked before the date')
  t.strictSame(await storedRows(), before)
})

t.test('[D54] over a real socket: fetch withdraws, and the next read over HTTP no longer has the cycle', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  t.equal((await (await fetch(`${base}/v1/prices/latest`)).json() as Array<{ valid_from: string }>)[0]?.valid_from, '2026-10-15')

  const denied = await fetch(`${base}/v1/cycles/2026-10-15`, { method: 'DELETE', headers: { authorization: 'Bearer nope' } })
  t.equal(denied.status, 401)
  t.strictSame(await denied.json(), { detail: INVALID_WITHDRAW_TOKEN })

  const res = await fetch(`${base}/v1/cycles/2026-10-15`, { method: 'DELETE', headers: AUTH })
  t.equal(res.status, 200)
  t.strictSame(await res.json(), { status: 'withdrawn', valid_from: '2026-10-15', valid_to: '2026-11-14', rows_removed: 5 })
  const latest = await (await fetch(`${base}/v1/prices/latest`)).json() as Array<{ valid_from: string }>
  t.equal(latest.length, STORED.filter((p) => p.valid_from === '2026-09-15').length)
  t.ok(latest.every((p) => p.valid_from === '2026-09-15'))
})
