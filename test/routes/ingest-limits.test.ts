import t from '../support/file-test.js'
import { build, resetData } from '../helper.js'
import { AUTH, HEADER, TOKEN, csv, multipart, storedRows, upload } from '../fixtures/ingest.js'
import { formatByteSize } from '../../src/ingest/multipart-upload.js'

/** D12: MAX_UPLOAD_BYTES. Over it: 413 naming the limit, nothing written, never a truncation. */

t.beforeEach(resetData)

const ROWS = [HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25', '15-01-2026,14-02-2026,Mombasa,178.00,168.00,158.00']

/** A valid CSV of exactly `bytes` bytes (trailing blank lines are skipped, D6), whose rows
 * change the stored prices, so that anything written would show. */
function csvOfSize (bytes: number): string {
  const text = csv(...ROWS).replace('180.50', '199.99')
  if (text.length > bytes) throw new Error('too small')
  return text + '\n'.repeat(bytes - text.length)
}

t.test('[D12] the limit is said as people say it', async (t) => {
  t.equal(formatByteSize(10 * 1024 * 1024), '10 MiB')
  t.equal(formatByteSize(1024 * 1024), '1 MiB')
  t.equal(formatByteSize(3 * 1024 * 1024 / 2), '1536 KiB')
  t.equal(formatByteSize(2048), '2 KiB')
  t.equal(formatByteSize(1500), '1500 bytes')
  t.equal(formatByteSize(1), '1 byte')
})

t.test('[D12] a file one byte over MAX_UPLOAD_BYTES: 413 with the figure, stored rows untouched', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN, maxUploadBytes: 1500 } })
  t.equal((await upload(app, csv(...ROWS))).statusCode, 201)
  const before = await storedRows()

  const over = await upload(app, csvOfSize(1501))
  t.equal(over.statusCode, 413)
  t.strictSame(over.json(), { detail: 'Uploaded file exceeds the 1500 bytes limit.' })
  t.equal(over.headers['cache-control'], 'no-store')
  t.strictSame(await storedRows(), before, 'nothing written, not even the rows that fit')

  const dry = await upload(app, csvOfSize(1501), { query: '?dry_run=true' })
  t.equal(dry.statusCode, 413)

  const exact = await upload(app, csvOfSize(1500))
  t.equal(exact.statusCode, 201, 'exactly the limit is allowed')
  t.equal(exact.json().updated, 1)
})

t.test('[D12] the default 10 MiB, and a Content-Length above it refused before a byte is read', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  t.equal((await upload(app, csv(...ROWS))).statusCode, 201)
  const before = await storedRows()

  const over = await upload(app, csvOfSize(10 * 1024 * 1024 + 1))
  t.equal(over.statusCode, 413)
  t.strictSame(over.json(), { detail: 'Uploaded file exceeds the 10 MiB limit.' })

  const huge = await upload(app, csvOfSize(12 * 1024 * 1024))
  t.equal(huge.statusCode, 413)
  t.strictSame(huge.json(), { detail: 'Uploaded file exceeds the 10 MiB limit.' })
  // D48: the rest is drained (lingering close, test/http/early-answer.test.ts), not cut off.
  t.equal(huge.headers.connection, 'keep-alive', 'the connection is not closed under the client')
  t.strictSame(await storedRows(), before)
})

t.test('[D12] a 1 MiB setting is named so; a non-multipart body over it is refused too', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN, maxUploadBytes: 1024 * 1024 } })
  const over = await upload(app, csvOfSize(1024 * 1024 + 1))
  t.equal(over.statusCode, 413)
  t.strictSame(over.json(), { detail: 'Uploaded file exceeds the 1 MiB limit.' })

  const raw = await app.inject({ method: 'POST', url: '/v1/ingest/csv', headers: { ...AUTH, 'content-type': 'text/csv' }, payload: csvOfSize(1024 * 1024 + 1) })
  t.equal(raw.statusCode, 413)
  t.strictSame(raw.json(), { detail: 'Uploaded file exceeds the 1 MiB limit.' })
})

t.test('[D12] another file part over the limit is refused as well, before the file field is judged', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN, maxUploadBytes: 1500 } })
  const form = multipart([{ name: 'attachment', filename: 'big.csv', contentType: 'text/csv', body: csvOfSize(1501) }])
  const res = await app.inject({ method: 'POST', url: '/v1/ingest/csv', headers: { ...AUTH, ...form.headers }, payload: form.payload })
  t.equal(res.statusCode, 413)
  t.strictSame(res.json(), { detail: 'Uploaded file exceeds the 1500 bytes limit.' })
})

t.test('[D48] a file name past 255 characters is answered as such, not as a wrong type', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  for (const length of [256, 100 * 1024]) {
    const form = multipart([{ name: 'file', filename: `${'a'.repeat(length - 4)}.csv`, contentType: 'text/csv', body: csv(...ROWS) }])
    const res = await app.inject({ method: 'POST', url: '/v1/ingest/csv', headers: { ...AUTH, ...form.headers }, payload: form.payload })
    t.equal(res.statusCode, 400, `${length} characters`)
    t.same(res.json(), { detail: 'Uploaded file name is longer than 255 characters.' })
  }
  const form = multipart([{ name: 'file', filename: `${'a'.repeat(251)}.csv`, contentType: 'text/csv', body: csv(...ROWS) }])
  t.equal((await app.inject({ method: 'POST', url: '/v1/ingest/csv', headers: { ...AUTH, ...form.headers }, payload: form.payload })).statusCode, 201, '255 characters are fine')
})
