import type { Test } from 'tap'
import t from '../support/file-test.js'
import { build, resetData } from '../helper.js'
import { AUTH, HEADER, csv, multipart, rowCount, storedRows, upload, withoutTimestamp } from '../fixtures/ingest.js'

/** Spec 4.5 and section 7 through the route: every status and exact message, D4–D12. */

const HEADER_MISMATCH = 'CSV header must include From, To, Town, Super (PMS), Diesel (AGO), Kerosene (IK)'
const PUBLIC = 'public, max-age=86400, s-maxage=604800'
const FILE_MISSING = { detail: [{ loc: ['body', 'file'], msg: 'field required', type: 'value_error.missing' }] }

t.beforeEach(resetData)

const app = async (t: Test) => await build(t, { config: { ingestToken: 'test-ingest-token' } })

t.test('[spec 4.5] 201 IngestResponse, D17 public Cache-Control, rows stored exactly (D4 towns, D7 dates)', async (t) => {
  const res = await upload(await app(t), csv(
    HEADER,
    "15-01-2026,14-02-2026,  MURANG'A ,181,171.1,161.25",
    '15-01-2026,14-02-2026,kapsabet-nandi,180.5,170.00,160'
  ))
  t.equal(res.statusCode, 201)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.headers['cache-control'], PUBLIC)
  const body = res.json()
  t.strictSame(Object.keys(body), ['status', 'records_processed', 'timestamp', 'inserted', 'updated', 'unchanged'])
  t.strictSame(withoutTimestamp(body), { status: 'success', records_processed: 2, inserted: 2, updated: 0, unchanged: 0 })
  const [date] = String(body.timestamp).split('T')
  t.equal(date, new Date().toISOString().slice(0, 10), 'D16: UTC')
  t.strictSame(await storedRows(), [
    { id: 2, town: 'Kapsabet-Nandi', super_petrol: '180.50', diesel: '170.00', kerosene: '160.00', valid_from: '2026-01-15', valid_to: '2026-02-14' },
    { id: 1, town: "Murang'a", super_petrol: '181.00', diesel: '171.10', kerosene: '161.25', valid_from: '2026-01-15', valid_to: '2026-02-14' }
  ])
})

t.test('[spec 4.5 r1-3, D12] columns in any order, lenient names, extra columns ignored, BOM and CRLF', async (t) => {
  const text = '\uFEFF' + [
    'kerosene (ik),TOWN,Notes,super-PMS,  to ,Diesel_AGO,valid from',
    '160.25,Nairobi,"anything, really",180.50,2026-02-14,170.00,2026-01-15',
    ''
  ].join('\r\n')
  const res = await upload(await app(t), text)
  t.equal(res.statusCode, 201)
  t.strictSame(await storedRows(), [
    { id: 1, town: 'Nairobi', super_petrol: '180.50', diesel: '170.00', kerosene: '160.25', valid_from: '2026-01-15', valid_to: '2026-02-14' }
  ])
})

// Every 400 of spec 4.5 / section 7 and D5–D10, exact detail, nothing written.
// The fourth element: what the answer says beside `detail`: D51 the line a row fault is on, D72
// the column, the cause and its hint.
const ALL_COLUMNS = ['From', 'To', 'Town', 'Super (PMS)', 'Diesel (AGO)', 'Kerosene (IK)']
const COMMA_DECIMAL = { problem: 'comma_decimal', hint: 'Write a point before the decimals, not a comma: 178.90, not 178,90.' }
const rejections: Array<[string, string | Uint8Array, string, Record<string, unknown>]> = [
  ['[spec 7] header columns missing', csv('From,To,Town,Super (PMS),Diesel (AGO)', '15-01-2026,14-02-2026,Nairobi,180.50,170.00'), HEADER_MISMATCH, {
    line: 1,
    problem: 'missing_columns',
    hint: 'The header on line 1 has no column for Kerosene (IK). Name the columns From, To, Town, Super (PMS), Diesel (AGO), Kerosene (IK); case, spaces and punctuation do not matter.',
    missing_columns: ['Kerosene (IK)'],
    found_columns: ['From', 'To', 'Town', 'Super (PMS)', 'Diesel (AGO)']
  }],
  ['[spec 7] empty file', '', HEADER_MISMATCH, {
    problem: 'empty_file',
    hint: 'The file holds no text: export the cycle again, with the header From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK) as its first line.',
    missing_columns: ALL_COLUMNS,
    found_columns: []
  }],
  ['[spec 7] unparseable date, raw cell', csv(HEADER, '2026/01/15,2026/02/14,Nairobi,180.50,170.00,160.25'), 'Invalid date format: 2026/01/15', {
    line: 2,
    column: 'From',
    problem: 'date_format',
    hint: 'Write dates as DD-MM-YYYY (15-01-2026) or YYYY-MM-DD (2026-01-15), one format for the whole file; this cell is written with "/" instead of "-".'
  }],
  ['[spec 7] no data rows', csv(HEADER, '', ''), 'CSV payload contains no rows.', {}],
  ['[D5] comma decimal', csv(HEADER, '15-01-2026,14-02-2026,Nairobi,"180,50",170.00,160.25'), 'Invalid price value: 180,50', { line: 2, column: 'Super (PMS)', ...COMMA_DECIMAL }],
  ['[D5] three decimals', csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.505,170.00,160.25'), 'Invalid price value: 180.505', {
    line: 2,
    column: 'Super (PMS)',
    problem: 'too_many_decimals',
    hint: 'A price has at most two decimals, with zeros after them allowed: 178.90 or 178.900, not 178.905.'
  }],
  ['[D5] empty price', csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,,160.25'), 'Invalid price value: ', {
    line: 2,
    column: 'Diesel (AGO)',
    problem: 'empty_price',
    hint: 'The cell is empty: every row needs all three prices.'
  }],
  ['[D5] zero', csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,0'), 'Price out of range: 0', { line: 2, column: 'Kerosene (IK)' }],
  ['[D5] above 9999.99', csv(HEADER, '15-01-2026,14-02-2026,Nairobi,10000.00,170.00,160.25'), 'Price out of range: 10000.00', { line: 2, column: 'Super (PMS)' }],
  ['[D6] empty town, physical line after a blank line', csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25', '', '15-01-2026,14-02-2026, ,180.50,170.00,160.25'), 'Missing value for Town on line 4', { line: 4, column: 'Town' }],
  ['[D6] too few cells', csv(HEADER, '15-01-2026,14-02-2026'), 'Missing value for Town on line 2', { line: 2, column: 'Town' }],
  ['[D7] formats mixed in one file', csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25', '2026-01-15,2026-02-14,Mombasa,180.50,170.00,160.25'), 'Invalid date format: 2026-01-15', {
    line: 3,
    column: 'From',
    problem: 'date_format',
    date_format: 'DD-MM-YYYY',
    hint: "This file's dates are DD-MM-YYYY (like 15-01-2026), the format of its first date cell; this cell is written YYYY-MM-DD."
  }],
  ['[D7] impossible date', csv(HEADER, '31-02-2026,14-03-2026,Nairobi,180.50,170.00,160.25'), 'Invalid date format: 31-02-2026', {
    line: 2,
    column: 'From',
    problem: 'no_such_date',
    date_format: 'DD-MM-YYYY',
    hint: "The cell is written DD-MM-YYYY, the format of this file's dates, but no such day exists."
  }],
  ['[D8] not a pricing cycle', csv(HEADER, '16-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'), 'Invalid pricing cycle on line 2: From 16-01-2026 To 14-02-2026', { line: 2 }],
  ['[D9] duplicate after D4 normalisation', csv(HEADER, '15-01-2026,14-02-2026,nairobi,180.50,170.00,160.25', '15-01-2026,14-02-2026,  NAIROBI ,181.50,171.00,161.25'), 'Duplicate row for Nairobi from 2026-01-15 on lines 2 and 3', { line: 3 }],
  // A lone 0xFF in ASCII text is the Windows-1252 `ÿ` (D72).
  ['not UTF-8', new Uint8Array([...Buffer.from(HEADER + '\n15-01-2026,14-02-2026,Nair'), 0xff, ...Buffer.from('bi,180.50,170.00,160.25\n')]), 'Uploaded file is not valid UTF-8 text.', {
    line: 2,
    problem: 'encoding',
    encoding: 'Windows-1252',
    hint: 'Line 2 has the byte 0xFF, "ÿ" in Windows-1252 ("ANSI"), the encoding the file seems to be saved in: save the file as "CSV UTF-8 (Comma delimited) (*.csv)" instead.'
  }]
]

for (const [name, body, detail, fields] of rejections) {
  t.test(`${name}: 400 "${detail}", nothing written`, async (t) => {
    const a = await app(t)
    const res = await upload(a, body)
    t.equal(res.statusCode, 400)
    t.equal(res.headers['cache-control'], 'no-store', 'D17: errors are never cached')
    t.strictSame(res.json(), { detail, ...fields })
    const dry = await upload(a, body, { query: '/dry-run' })
    t.strictSame([dry.statusCode, dry.headers['cache-control'], dry.json()], [400, 'no-store', { detail, ...fields }], 'the dry run refuses it alike')
    t.equal(await rowCount(), 0)
  })
}

t.test('[D10] a file whose only bad cell is on its last line writes nothing, stored rows untouched', async (t) => {
  const a = await app(t)
  const first = await upload(a, csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'))
  t.equal(first.statusCode, 201)
  const before = await storedRows()
  const lines = [HEADER, '15-01-2026,14-02-2026,Nairobi,199.99,199.99,199.99']
  for (let i = 1; i <= 500; i++) lines.push(`15-02-2026,14-03-2026,Town ${i},180.50,170.00,160.25`)
  lines.push('15-02-2026,14-03-2026,Town 501,180.50,170.00,abc')
  const res = await upload(a, csv(...lines))
  t.equal(res.statusCode, 400)
  t.strictSame(res.json(), { detail: 'Invalid price value: abc', line: 503, column: 'Kerosene (IK)', problem: 'not_a_number', hint: 'A price is a plain decimal number with a point, such as 178.90.' })
  t.strictSame(await storedRows(), before)
})

t.test('[D11] no `file` field, or not multipart at all: the pydantic-v1 422', async (t) => {
  const a = await app(t)
  const post = async (headers: Record<string, string>, payload?: string | Buffer) =>
    await a.inject({ method: 'POST', url: '/v1/ingest/csv', headers: { ...AUTH, ...headers }, ...(payload !== undefined ? { payload } : {}) })
  const cases: Array<[string, Record<string, string>, (string | Buffer)?]> = [
    ['file part named otherwise', ...formOf([{ name: 'upload', filename: 'p.csv', contentType: 'text/csv', body: csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25') }])],
    ['`file` sent as a text field', ...formOf([{ name: 'file', body: csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25') }])],
    ['only other fields', ...formOf([{ name: 'note', body: 'hello' }])],
    ['multipart with no parts', { 'content-type': 'multipart/form-data; boundary=xyz' }, '--xyz--\r\n'],
    ['multipart, empty body', { 'content-type': 'multipart/form-data; boundary=xyz' }, ''],
    ['JSON', { 'content-type': 'application/json' }, JSON.stringify({ file: 'From,To' })],
    ['invalid JSON', { 'content-type': 'application/json' }, '{"file":'],
    ['text/csv as the raw body', { 'content-type': 'text/csv' }, csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25')],
    ['text/plain', { 'content-type': 'text/plain' }, 'file'],
    ['form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, 'file=x'],
    ['no body, no content-type', {}],
    ['a body without content-type', {}, 'From,To']
  ]
  for (const [name, headers, payload] of cases) {
    const res = await post(headers, payload)
    t.equal(res.statusCode, 422, name)
    t.strictSame(res.json(), FILE_MISSING, name)
    t.equal(res.headers['cache-control'], 'no-store', name)
  }
  t.equal(await rowCount(), 0)
})

function formOf (parts: Parameters<typeof multipart>[0]): [Record<string, string>, Buffer] {
  const form = multipart(parts)
  return [form.headers, form.payload]
}

t.test('[spec 4.5, D12] 415 unless the file part is text/csv, application/vnd.ms-excel or application/octet-stream', async (t) => {
  const a = await app(t)
  const body = csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25')
  for (const contentType of ['image/png', 'text/plain', 'application/json', 'text/csvx', 'application/vnd.ms-excel.sheet.macroEnabled.12']) {
    const res = await upload(a, body, { contentType })
    t.equal(res.statusCode, 415, contentType)
    t.strictSame(res.json(), { detail: 'Uploaded file must be a CSV file.' }, contentType)
  }
  // RFC 7578: a part without Content-Type is text/plain.
  const bare = multipart([{ name: 'file', filename: 'p.csv', body }])
  const res = await a.inject({ method: 'POST', url: '/v1/ingest/csv', headers: { ...AUTH, ...bare.headers }, payload: bare.payload })
  t.equal(res.statusCode, 415)
  t.equal(await rowCount(), 0)

  for (const contentType of ['TEXT/CSV; charset=UTF-8', 'text/csv ; header=present', 'application/vnd.ms-excel', 'Application/Octet-Stream']) {
    const ok = await upload(a, body, { contentType })
    t.equal(ok.statusCode, 201, contentType)
  }
})

t.test('[spec 7] 415 is judged before the CSV is parsed', async (t) => {
  const res = await upload(await app(t), 'not a csv at all', { contentType: 'image/png' })
  t.equal(res.statusCode, 415)
  t.strictSame(res.json(), { detail: 'Uploaded file must be a CSV file.' })
})

t.test('a FormData body, as browsers and the ingest script send it, is accepted', async (t) => {
  const form = new FormData()
  form.append('comment', 'January cycle')
  form.append('file', new Blob([csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25')], { type: 'text/csv' }), 'jan.csv')
  const request = new Response(form)
  const res = await (await app(t)).inject({
    method: 'POST',
    url: '/v1/ingest/csv',
    headers: { ...AUTH, 'content-type': request.headers.get('content-type') as string },
    payload: Buffer.from(await request.arrayBuffer())
  })
  t.equal(res.statusCode, 201)
  t.equal(res.json().records_processed, 1)
})

t.test('a malformed multipart body is a 4xx in the envelope, never a 500', async (t) => {
  const a = await app(t)
  const post = async (contentType: string, payload: string | Buffer) =>
    await a.inject({ method: 'POST', url: '/v1/ingest/csv', headers: { ...AUTH, 'content-type': contentType }, payload })
  const good = multipart([{ name: 'file', filename: 'p.csv', contentType: 'text/csv', body: csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25') }])

  const noBoundary = await post('multipart/form-data', good.payload)
  t.equal(noBoundary.statusCode, 400)
  t.strictSame(noBoundary.json(), { detail: 'Malformed multipart/form-data body.' })

  const truncated = await post(good.headers['content-type'], good.payload.subarray(0, good.payload.length - 20))
  t.equal(truncated.statusCode, 400)
  t.strictSame(truncated.json(), { detail: 'Malformed multipart/form-data body.' })

  const garbage = await post('multipart/form-data; boundary=xyz', 'this is not multipart at all')
  t.equal(garbage.statusCode, 400)
  t.strictSame(garbage.json(), { detail: 'Malformed multipart/form-data body.' })

  const twoFiles = multipart([
    { name: 'file', filename: 'a.csv', contentType: 'text/csv', body: csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25') },
    { name: 'file', filename: 'b.csv', contentType: 'text/csv', body: csv(HEADER, '15-01-2026,14-02-2026,Mombasa,180.50,170.00,160.25') }
  ])
  const two = await post(twoFiles.headers['content-type'], twoFiles.payload)
  t.equal(two.statusCode, 400)
  t.strictSame(two.json(), { detail: 'Upload exactly one file, in the form field "file".' })

  const manyFields = multipart(Array.from({ length: 40 }, (_, i) => ({ name: `f${i}`, body: 'x' })))
  const many = await post(manyFields.headers['content-type'], manyFields.payload)
  t.equal(many.statusCode, 413)
  t.strictSame(many.json(), { detail: 'Multipart body has too many parts.' })
  t.equal(await rowCount(), 0)
})

t.test('[D20] dry_run must be a boolean: the query 422', async (t) => {
  const res = await upload(await app(t), csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'), { query: '?dry_run=maybe' })
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), { detail: [{ loc: ['query', 'dry_run'], msg: 'value could not be parsed to a boolean', type: 'type_error.bool' }] })
  t.equal(await rowCount(), 0)
})

t.test('[D21] an empty dry_run means absent: a real ingest', async (t) => {
  const res = await upload(await app(t), csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'), { query: '?dry_run=' })
  t.equal(res.statusCode, 201)
  t.equal(await rowCount(), 1)
})
