import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import { HEADER, TOKEN, csv, rowCount, storedRows, upload, withoutTimestamp } from '../fixtures/ingest.js'
import { SAMPLE_TOWNS } from '../fixtures/towns.js'
import { build, resetData } from '../helper.js'

/**
 * Issue 46: the files spreadsheets and hurried admins produce, through both upload operations.
 * Each refusal keeps its exact `detail`, says what to fix beside it (D72), and writes nothing.
 */

const HEADER_MISMATCH = 'CSV header must include From, To, Town, Super (PMS), Diesel (AGO), Kerosene (IK)'
const ALL_COLUMNS = ['From', 'To', 'Town', 'Super (PMS)', 'Diesel (AGO)', 'Kerosene (IK)']
const SAVE = 'save the file as "CSV UTF-8 (Comma delimited) (*.csv)"'

/** October's cycle for the 233 real towns, as the service stores it before every test. */
const OCTOBER = csv(HEADER, ...SAMPLE_TOWNS.map((town, i) => `15-10-2026,14-11-2026,${town},${180 + (i % 20)}.50,${170 + (i % 9)}.25,160.00`))

const app = async (t: Test): Promise<FastifyInstance> => await build(t, { config: { ingestToken: TOKEN } })

/** The stored October cycle as GET /v1/prices.csv exports it: the real file an admin edits. */
async function exported (t: Test, a: FastifyInstance): Promise<string> {
  const res = await a.inject({ url: '/v1/prices.csv?start_date=2026-10-15&end_date=2026-11-14' })
  t.equal(res.statusCode, 200)
  return res.body
}

t.beforeEach(resetData)

/** Uploads `file` to the ingest and its dry run: each answers 400 with `expected`, and the table keeps its rows. */
async function refusedByBoth (t: Test, a: FastifyInstance, file: string | Uint8Array, expected: Record<string, unknown>): Promise<void> {
  const before = await rowCount()
  t.equal(before, 233, 'October is stored')
  for (const query of ['', '/dry-run']) {
    const res = await upload(a, file, { query })
    t.equal(res.statusCode, 400, `POST /v1/ingest/csv${query}`)
    t.strictSame(res.json(), expected, `POST /v1/ingest/csv${query}`)
    t.equal(await rowCount(), before, 'nothing written')
  }
}

t.test('a UTF-16 export (Excel\'s "Unicode Text"), made by converting a real CSV: the encoding named, nothing written', async (t) => {
  const a = await app(t)
  t.equal((await upload(a, OCTOBER)).statusCode, 201)
  const text = await exported(t, a)
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])
  await refusedByBoth(t, a, utf16, {
    detail: 'Uploaded file is not valid UTF-8 text.',
    problem: 'encoding',
    encoding: 'UTF-16LE',
    hint: `The file is UTF-16 text (little-endian; Excel calls it "Unicode Text"): ${SAVE} instead.`
  })
})

t.test('a Windows-1252 file with `é`: the encoding, the line and the letter, nothing written', async (t) => {
  const a = await app(t)
  t.equal((await upload(a, OCTOBER)).statusCode, 201)
  const lines = (await exported(t, a)).split('\r\n')
  lines[0] += ',Notes'
  lines[5] += ',Prix révisé par EPRA'
  const ansi = Buffer.from(lines.join('\r\n'), 'latin1') // é is 0xE9 in Windows-1252 as in Latin-1
  t.equal(ansi.indexOf(0xe9) > 0, true, 'the file holds the single byte 0xE9')
  await refusedByBoth(t, a, ansi, {
    detail: 'Uploaded file is not valid UTF-8 text.',
    line: 6,
    problem: 'encoding',
    encoding: 'Windows-1252',
    hint: `Line 6 has the byte 0xE9, "é" in Windows-1252 ("ANSI"), the encoding the file seems to be saved in: ${SAVE} instead.`
  })
  t.equal((await upload(a, Buffer.from(lines.join('\r\n'), 'utf8'))).statusCode, 201, 'the same file saved as UTF-8 is read')
})

t.test('a semicolon export with comma decimals: the delimiter and the header as found, nothing written', async (t) => {
  const a = await app(t)
  t.equal((await upload(a, OCTOBER)).statusCode, 201)
  const excel = (await exported(t, a)).replaceAll(',', ';').replace(/(\d)\.(\d\d)/g, '$1,$2')
  t.match(excel, /^From;To;Town;Super \(PMS\);Diesel \(AGO\);Kerosene \(IK\)\r\n15-10-2026;14-11-2026;[^;]+;\d+,50;\d+,25;160,00\r\n/)
  await refusedByBoth(t, a, excel, {
    detail: HEADER_MISMATCH,
    line: 1,
    problem: 'delimiter',
    delimiter: ';',
    hint: 'The columns are separated by semicolons (;), not commas: save the file as "CSV UTF-8 (Comma delimited)", with a point before the decimals.',
    missing_columns: ALL_COLUMNS,
    found_columns: ['From;To;Town;Super (PMS);Diesel (AGO);Kerosene (IK)']
  })
})

t.test('a title row above the header: the line of the real header, nothing written', async (t) => {
  const a = await app(t)
  t.equal((await upload(a, OCTOBER)).statusCode, 201)
  await refusedByBoth(t, a, 'EPRA pump prices for 15 October to 14 November 2026\r\n' + await exported(t, a), {
    detail: HEADER_MISMATCH,
    line: 1,
    problem: 'title_row',
    hint: 'Line 1 is not the header, line 2 is: delete the lines above the header, so that it is the first line.',
    missing_columns: ALL_COLUMNS,
    found_columns: ['EPRA pump prices for 15 October to 14 November 2026']
  })
})

t.test('a `sep=,` first line: delete it, nothing written', async (t) => {
  const a = await app(t)
  t.equal((await upload(a, OCTOBER)).statusCode, 201)
  await refusedByBoth(t, a, 'sep=,\r\n' + await exported(t, a), {
    detail: HEADER_MISMATCH,
    line: 1,
    problem: 'sep_line',
    hint: 'Line 1 is "sep=,", a line some spreadsheets add to name the separator: delete it, so that the header is the first line.',
    missing_columns: ALL_COLUMNS,
    found_columns: ['sep=', '']
  })
})

t.test('an empty file: said to be empty, nothing written', async (t) => {
  const a = await app(t)
  t.equal((await upload(a, OCTOBER)).statusCode, 201)
  await refusedByBoth(t, a, '', {
    detail: HEADER_MISMATCH,
    problem: 'empty_file',
    hint: 'The file holds no text: export the cycle again, with the header From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK) as its first line.',
    missing_columns: ALL_COLUMNS,
    found_columns: []
  })
})

t.test('a typo in one header (`Desiel (AGO)`): the column missing, the cell meant, nothing written', async (t) => {
  const a = await app(t)
  t.equal((await upload(a, OCTOBER)).statusCode, 201)
  await refusedByBoth(t, a, (await exported(t, a)).replace('Diesel (AGO)', 'Desiel (AGO)'), {
    detail: HEADER_MISMATCH,
    line: 1,
    problem: 'misspelt_column',
    hint: '"Desiel (AGO)" (column 5) is not a column name this service knows: did you mean Diesel (AGO)?',
    missing_columns: ['Diesel (AGO)'],
    found_columns: ['From', 'To', 'Town', 'Super (PMS)', 'Desiel (AGO)', 'Kerosene (IK)']
  })
})

t.test('cells: each names its line and column, the date format of the file, the price rule broken; nothing written', async (t) => {
  const a = await app(t)
  t.equal((await upload(a, OCTOBER)).statusCode, 201)
  const lines = (await exported(t, a)).split('\r\n')
  /** The export with line 4's cells replaced: [From, Super (PMS)]. */
  const edited = (from: string, superPetrol: string): string => {
    const copy = [...lines]
    const cells = (copy[3] as string).split(',')
    cells[0] = from
    cells[3] = superPetrol
    copy[3] = cells.join(',')
    return copy.join('\r\n')
  }
  const town = (lines[3] as string).split(',')[2] as string
  const dateHint = (seen: string): Record<string, string> =>
    ({ problem: 'date_format', date_format: 'DD-MM-YYYY', hint: `This file's dates are DD-MM-YYYY (like 15-01-2026), the format of its first date cell; this cell is ${seen}.` })
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['15/10/2026', '180.50', { detail: 'Invalid date format: 15/10/2026', line: 4, column: 'From', ...dateHint('written with "/" instead of "-"') }],
    ['15-10-26', '180.50', { detail: 'Invalid date format: 15-10-26', line: 4, column: 'From', ...dateHint('written with a two-digit year') }],
    ['2026-10-15 00:00:00', '180.50', { detail: 'Invalid date format: 2026-10-15 00:00:00', line: 4, column: 'From', ...dateHint('written with a time after the date') }],
    ['15-10-2026', '"178,90"', { detail: 'Invalid price value: 178,90', line: 4, column: 'Super (PMS)', problem: 'comma_decimal', hint: 'Write a point before the decimals, not a comma: 178.90, not 178,90.' }],
    ['15-10-2026', 'KSh 178.90', { detail: 'Invalid price value: KSh 178.90', line: 4, column: 'Super (PMS)', problem: 'currency_or_unit', hint: 'Write the number alone, without a currency or unit: 178.90, not KSh 178.90.' }],
    ['15-10-2026', '1.789E+02', {
      detail: 'Invalid price value: 1.789E+02', line: 4, column: 'Super (PMS)', problem: 'exponent', hint: 'Write the price in full, not in exponent notation: 178.90, not 1.789E+02 (format the column as a number with two decimals).'
    }],
    ['15-10-2026', '', { detail: 'Invalid price value: ', line: 4, column: 'Super (PMS)', problem: 'empty_price', hint: 'The cell is empty: every row needs all three prices.' }],
    ['15-10-2026', '180.505', {
      detail: 'Invalid price value: 180.505', line: 4, column: 'Super (PMS)', problem: 'too_many_decimals', hint: 'A price has at most two decimals, with zeros after them allowed: 178.90 or 178.900, not 178.905.'
    }]
  ]
  t.comment(`line 4 is ${town}'s`)
  for (const [from, superPetrol, expected] of cases) await refusedByBoth(t, a, edited(from, superPetrol), expected)
})

t.test('[D5] `178.900` is stored as 178.90, the rest of the cycle unchanged', async (t) => {
  const a = await app(t)
  t.equal((await upload(a, OCTOBER)).statusCode, 201)
  const before = await storedRows()
  const lines = (await exported(t, a)).split('\r\n')
  const cells = (lines[1] as string).split(',')
  const town = cells[2] as string
  cells[3] = '178.900'
  lines[1] = cells.join(',')
  const res = await upload(a, lines.join('\r\n'))
  t.equal(res.statusCode, 201)
  t.strictSame(withoutTimestamp(res.json()), { status: 'success', records_processed: 233, inserted: 0, updated: 1, unchanged: 232 })
  t.strictSame(await storedRows(), before.map((row) => row.town === town ? { ...row, super_petrol: '178.90' } : row))
})

t.test('[D4] `Murang’a` with the typographic apostrophe uploads as `Murang\'a`: one town; the export re-uploads unchanged', async (t) => {
  const a = await app(t)
  const typed = OCTOBER.replace("Murang'a", 'Murang\u2019a')
  t.not(typed, OCTOBER, 'the file spells the town with U+2019')
  t.equal((await upload(a, typed)).statusCode, 201)
  const towns = (await a.inject('/v1/towns')).json() as string[]
  t.strictSame(towns.filter((name) => name.startsWith('Murang')), ["Murang'a"])
  t.strictSame(towns, [...SAMPLE_TOWNS].sort((x, y) => (x.toLowerCase() < y.toLowerCase() ? -1 : x.toLowerCase() > y.toLowerCase() ? 1 : 0)), 'the 233 towns, each once')
  const stored = await storedRows()

  // The same cycle typed with the ASCII apostrophe, then the service's own export of it: every row unchanged.
  for (const file of [OCTOBER, await exported(t, a)]) {
    const res = await upload(a, file)
    t.equal(res.statusCode, 201)
    t.strictSame(withoutTimestamp(res.json()), { status: 'success', records_processed: 233, inserted: 0, updated: 0, unchanged: 233 })
    t.strictSame(await storedRows(), stored, 'ids and prices as they were')
  }
  const filtered = (await a.inject(`/v1/prices/latest?town=${encodeURIComponent('murang\u2019a')}`)).json() as Array<{ town: string }>
  t.strictSame(filtered.map((p) => p.town), ["Murang'a"], 'the town filter reads the apostrophe the same way')
})
