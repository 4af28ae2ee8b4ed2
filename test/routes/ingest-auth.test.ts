import { Readable } from 'node:stream'
import t from '../support/file-test.js'
import { build, resetData } from '../helper.js'
import { HEADER, TOKEN, csv, rowCount, upload } from '../fixtures/ingest.js'

/** Spec 5 and D13: the bearer token, checked before the body, in constant time. */

const INVALID = { detail: 'Invalid authorization token for ingestion endpoint.' }
const FILE = csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25')

t.beforeEach(resetData)

t.test('[spec 5 r3] missing or wrong token: 401 with the exact detail, nothing written', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const wrong = [
    undefined,
    '',
    'Bearer',
    'Bearer ',
    `Bearer ${TOKEN}x`,
    `Bearer ${TOKEN.slice(0, -1)}`,
    `Bearer ${TOKEN.toUpperCase()}`,
    `Basic ${TOKEN}`,
    `Token ${TOKEN}`,
    TOKEN,
    `Bearer${TOKEN}`
  ]
  for (const authorization of wrong) {
    const res = await upload(app, FILE, { authorization: authorization ?? null })
    t.equal(res.statusCode, 401, String(authorization))
    t.strictSame(res.json(), INVALID, String(authorization))
    t.equal(res.headers['www-authenticate'], 'Bearer', 'RFC 9110: a 401 names its scheme')
    t.not(res.headers.connection, 'close', 'D29: not closed under the client; the unread body is drained')
    t.equal(res.headers['cache-control'], 'no-store')
  }
  t.equal(await rowCount(), 0)
})

t.test('[spec 5 r2] the right token is accepted; the scheme name is case-insensitive (RFC 9110)', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER  ${TOKEN}`]) {
    const res = await upload(app, FILE, { authorization })
    t.equal(res.statusCode, 201, authorization)
  }
})

t.test('[D13] the token is checked before the body: a garbage body still gets 401', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  const post = async (headers: Record<string, string>, payload: string | Buffer | Readable) =>
    await app.inject({ method: 'POST', url: '/v1/ingest/csv?dry_run=maybe', headers, payload })
  // Each of these would be a 400, 413 or 422 with the right token.
  const garbage = await post({ authorization: 'Bearer nope', 'content-type': 'multipart/form-data' }, 'garbage')
  t.equal(garbage.statusCode, 401)
  t.strictSame(garbage.json(), INVALID)
  const json = await post({ 'content-type': 'application/json' }, '{"file":')
  t.equal(json.statusCode, 401)
  t.strictSame(json.json(), INVALID)
})

t.test('[D13] the token is checked before the body: an endless body is never read', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN, maxUploadBytes: 1024 } })
  const send = async (authorization: string, contentType: string) => {
    let pulled = 0
    const endless = new Readable({
      read () {
        pulled++
        this.push(Buffer.alloc(64 * 1024, 'x'))
      }
    })
    const res = await app.inject({ method: 'POST', url: '/v1/ingest/csv', headers: { authorization, 'content-type': contentType }, payload: endless })
    endless.destroy()
    return { res, pulled }
  }
  const refused = await send('Bearer nope', 'multipart/form-data; boundary=xyz')
  t.equal(refused.res.statusCode, 401)
  t.strictSame(refused.res.json(), INVALID)
  t.equal(refused.pulled, 0, 'not one chunk of the body was asked for')
  // Control: with the right token the body is read, until the D12 limit stops it.
  const read = await send(`Bearer ${TOKEN}`, 'application/json')
  t.equal(read.res.statusCode, 413)
  t.strictSame(read.res.json(), { detail: 'Uploaded file exceeds the 1 KiB limit.' })
  t.ok(read.pulled >= 1)
})

t.test('[spec 5 r4] INGEST_TOKEN unset: the endpoint is open, whatever the header says', async (t) => {
  const app = await build(t, { config: { ingestToken: undefined } })
  const none = await upload(app, FILE, { authorization: null })
  t.equal(none.statusCode, 201)
  const any = await upload(app, FILE, { authorization: 'Bearer whatever' })
  t.equal(any.statusCode, 201)
  t.equal(any.json().unchanged, 1)
})
