import t from '../support/file-test.js'
import { IngestRejected } from '../../src/domain/errors.js'
import {
  decodeCsv,
  detectDateFormat,
  mapHeader,
  parseCycleCsv,
  parseDateCell,
  parsePriceCell
} from '../../src/ingest/csv.js'
import type { PriceRow } from '../../src/domain/price-rows.js'

const HEADER = 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)'
const HEADER_MISMATCH = 'CSV header must include From, To, Town, Super (PMS), Diesel (AGO), Kerosene (IK)'
const NO_ROWS = 'CSV payload contains no rows.'

const csv = (...lines: string[]): string => lines.join('\n') + '\n'

/** An expected row of the cycle 2026-01-15 … 2026-02-14. */
function row (line: number, town = 'Nairobi', prices: [string, string, string] = ['180.50', '170.00', '160.25']): PriceRow {
  const [superPetrol, diesel, kerosene] = prices
  return { line, town, validFrom: '2026-01-15', validTo: '2026-02-14', superPetrol, diesel, kerosene }
}

/** The 400 a call raised, as plain values, so one strictSame checks type, status and detail. */
function rejection (fn: () => unknown): { name: string, statusCode: number, detail: unknown } | 'no error' {
  try {
    fn()
  } catch (err) {
    if (!(err instanceof IngestRejected)) throw err
    return { name: err.name, statusCode: err.statusCode, detail: err.detail }
  }
  return 'no error'
}

const rejected = (detail: string) => ({ name: 'IngestRejected', statusCode: 400, detail })

t.test('[spec 4.5] a well-formed file parses to exact rows', async (t) => {
  t.strictSame(parseCycleCsv(csv(
    HEADER,
    '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25',
    '15-01-2026,14-02-2026,Mombasa,177.3,167,157.05'
  )), [row(2), row(3, 'Mombasa', ['177.30', '167.00', '157.05'])])
})

t.test('[spec 4.5] the last row needs no trailing line break', async (t) => {
  t.strictSame(parseCycleCsv(`${HEADER}\n15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25`), [row(2)])
})

t.test('[spec 4.5] decodeCsv reads UTF-8 with and without a byte order mark', async (t) => {
  const text = `${HEADER}\n15-01-2026,14-02-2026,Ol Kalou,180.50,170.00,160.25\n`
  const plain = new TextEncoder().encode(text)
  const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...plain])
  t.equal(decodeCsv(plain), text)
  t.equal(decodeCsv(withBom), text)
  t.strictSame(parseCycleCsv(decodeCsv(withBom)), [row(2, 'Ol Kalou')])
  t.equal(decodeCsv(new TextEncoder().encode('Murang’a – é')), 'Murang’a – é')
})

t.test('[spec 4.5] a byte order mark left in the text is ignored', async (t) => {
  t.strictSame(parseCycleCsv(`\uFEFF${HEADER}\n15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25\n`), [row(2)])
  t.strictSame(parseCycleCsv('\uFEFF"From",To,Town,Super,Diesel,Kerosene\n15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25\n'), [row(2)])
})

t.test('[spec 4.5] invalid UTF-8 is rejected', async (t) => {
  const detail = 'Uploaded file is not valid UTF-8 text.'
  t.strictSame(rejection(() => decodeCsv(new Uint8Array([0x46, 0x72, 0xff, 0x6f]))), rejected(detail))
  t.strictSame(rejection(() => decodeCsv(new Uint8Array([0x4e, 0xe2, 0x82]))), rejected(detail), 'truncated sequence')
  t.strictSame(rejection(() => decodeCsv(new Uint8Array([0xc0, 0xaf]))), rejected(detail), 'overlong encoding')
})

t.test('[spec 4.5] CRLF, CR and LF line breaks give the same rows and line numbers', async (t) => {
  const lines = [HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25', '', '15-01-2026,14-02-2026,Mombasa,177.30,167.00,157.05']
  const expected = [row(2), row(4, 'Mombasa', ['177.30', '167.00', '157.05'])]
  t.strictSame(parseCycleCsv(lines.join('\n') + '\n'), expected)
  t.strictSame(parseCycleCsv(lines.join('\r\n') + '\r\n'), expected)
  t.strictSame(parseCycleCsv(lines.join('\r') + '\r'), expected)
})

t.test('[spec 4.5] quoted fields, quoted commas and escaped quotes', async (t) => {
  // D30 refuses a comma or a quote inside a town name, so the quoted commas and escaped quotes
  // sit in an extra column (ignored) and the quoted town holds an apostrophe.
  t.strictSame(parseCycleCsv(csv(
    '"From","To","Town","Super (PMS)","Diesel (AGO)","Kerosene (IK)","Notes"',
    '"15-01-2026","14-02-2026","Nairobi","180.50","170.00","160.25","pump, station"',
    '15-01-2026,14-02-2026,"Murang\'a",180.50,170.00,160.25,"said ""hello"", twice"'
  )), [row(2), row(3, "Murang'a")])
})

t.test('[spec 4.5][D30] a quoted town holding a comma is read whole, then refused by name', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(
    'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)',
    '15-01-2026,14-02-2026,"Ruiru, Juja",180.50,170.00,160.25'
  ))), rejected('Invalid town name on line 2: Ruiru, Juja'))
})

t.test('[D6] a quoted field spanning lines: rows are numbered by the line they start on', async (t) => {
  const text = csv(
    'From,To,Town,Notes,Super (PMS),Diesel (AGO),Kerosene (IK)',
    '15-01-2026,14-02-2026,Nairobi,"first line',
    'second line',
    'third line",180.50,170.00,160.25',
    '15-01-2026,14-02-2026,Mombasa,"a\r\nb",177.30,167.00,157.05',
    '15-01-2026,14-02-2026,Kisumu,,bad,170.00,160.25'
  )
  t.strictSame(rejection(() => parseCycleCsv(text)), rejected('Invalid price value: bad'))
  const good = text.replace('Kisumu,,bad', 'Kisumu,,182.00')
  t.strictSame(parseCycleCsv(good).map((r) => [r.line, r.town]), [[2, 'Nairobi'], [5, 'Mombasa'], [7, 'Kisumu']])
  const withError = good.replace('Kisumu', '')
  t.strictSame(rejection(() => parseCycleCsv(withError)), rejected('Missing value for Town on line 7'))
  const crlf = good.replace(/\r?\n/g, '\r\n').replace('Kisumu', '')
  t.strictSame(rejection(() => parseCycleCsv(crlf)), rejected('Missing value for Town on line 7'), 'same with CRLF')
})

t.test('[D6] blank lines are skipped but still counted', async (t) => {
  const text = csv(
    '',
    HEADER,
    '',
    '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25',
    '   ',
    ',,,,,',
    '',
    '15-01-2026,14-02-2026,,180.50,170.00,160.25'
  )
  t.strictSame(rejection(() => parseCycleCsv(text)), rejected('Missing value for Town on line 8'))
  t.strictSame(parseCycleCsv(text.replace(',,180', ',Mombasa,180')), [row(4), row(8, 'Mombasa')])
})

t.test('[spec 4.5] header names are matched leniently, in any column order', async (t) => {
  const expected = [row(2)]
  t.strictSame(parseCycleCsv(csv(
    ' From , to ,TOWN,SUPER (PMS),diesel_ago,Kerosene-IK',
    '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'
  )), expected, 'spaces, case and punctuation')
  t.strictSame(parseCycleCsv(csv(
    'valid_from,valid_to,town,super_petrol,diesel,kerosene',
    '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'
  )), expected, 'canonical names')
  t.strictSame(parseCycleCsv(csv(
    'From,To,Town,Super,Diesel,Kerosene',
    '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'
  )), expected, 'short fuel names')
  t.strictSame(parseCycleCsv(csv(
    'Kerosene (IK),Town,To,Diesel (AGO),From,Super (PMS)',
    '160.25,Nairobi,14-02-2026,170.00,15-01-2026,180.50'
  )), expected, 'any order')
  t.strictSame(mapHeader(['Notes', 'Kerosene (IK)', 'Town', 'To', 'Diesel (AGO)', 'From', 'Super (PMS)']), {
    validFrom: 5, validTo: 3, town: 2, superPetrol: 6, diesel: 4, kerosene: 1
  })
  t.strictSame(rejection(() => mapHeader(['From', 'To', 'Town', 'Super', 'Super (PMS)', 'Diesel', 'Kerosene'])),
    rejected('CSV header names Super (PMS) twice (columns 4 and 5)'), 'D48: an ambiguous header is refused')
  t.strictSame(rejection(() => parseCycleCsv(csv('From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK),TOWN', '15-01-2026,14-02-2026,Nairobi,1,1,1,Mombasa'))),
    rejected('CSV header names Town twice (columns 3 and 7)'))
})

t.test('[D48] a refused cell is echoed up to 100 characters', async (t) => {
  const huge = '9'.repeat(9 * 1024 * 1024)
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, `15-01-2026,14-02-2026,Nairobi,${huge},1,1`))),
    rejected(`Price out of range: ${'9'.repeat(100)}… (${huge.length} characters)`))
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, `15-01-2026,14-02-2026,N${'\u{1F600}'.repeat(60)},1,1,1`))),
    rejected(`Invalid town name on line 2: N${'\u{1F600}'.repeat(49)}… (121 characters)`), 'never half a surrogate pair')
})

t.test('[D12] extra columns and empty trailing cells are ignored', async (t) => {
  t.strictSame(parseCycleCsv(csv(
    'County,From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK),Remarks',
    'Nairobi County,15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25,ok',
    ',15-01-2026,14-02-2026,Mombasa,177.30,167.00,157.05,,, ,'
  )), [row(2), row(3, 'Mombasa', ['177.30', '167.00', '157.05'])])
})

t.test('[D48] a row with more fields than the header is refused, not shifted', async (t) => {
  // A decimal comma: `180,50` would store super petrol 180, diesel 50, kerosene 170.00.
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2001,14-02-2001,Nairobi,180,50,170.00,160.00'))),
    rejected('Line 2 has 7 fields; the header has 6'))
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25', '', '15-01-2026,14-02-2026,Mombasa,1,1,1,,x,'))),
    rejected('Line 4 has 8 fields; the header has 6'), 'counted up to the last filled field')
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,"Nai\nrobi",180.50,170.00,160.25'))),
    rejected('Invalid town name on line 2: Nai\nrobi'), 'a quoted town with a line break in it')
})

t.test('[spec 4.5] a header missing a required column is rejected', async (t) => {
  const names = HEADER.split(',')
  for (const missing of names) {
    const header = names.filter((n) => n !== missing).join(',')
    t.strictSame(rejection(() => parseCycleCsv(csv(header, '15-01-2026,14-02-2026,Nairobi,180.50,170.00'))),
      rejected(HEADER_MISMATCH), `without ${missing}`)
  }
  t.strictSame(rejection(() => parseCycleCsv(csv('Date,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)'))),
    rejected(HEADER_MISMATCH), 'unknown name')
  t.strictSame(rejection(() => parseCycleCsv(csv('15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'))),
    rejected(HEADER_MISMATCH), 'data without a header')
})

t.test('[spec 4.5] an empty file or one of blank lines has no header', async (t) => {
  for (const text of ['', '\n', '\r\n\r\n', '  \n\n', '\uFEFF']) {
    t.strictSame(rejection(() => parseCycleCsv(text)), rejected(HEADER_MISMATCH), JSON.stringify(text))
  }
})

t.test('[spec 4.5] a header without data rows is rejected', async (t) => {
  for (const text of [HEADER, `${HEADER}\n`, `${HEADER}\r\n\r\n`, `${HEADER}\n\n  \n,,,,,\n`]) {
    t.strictSame(rejection(() => parseCycleCsv(text)), rejected(NO_ROWS), JSON.stringify(text))
  }
})

t.test('[D4] town names are normalised', async (t) => {
  const towns = parseCycleCsv(csv(
    HEADER,
    "15-01-2026,14-02-2026,MURANG'A,180.50,170.00,160.25",
    "15-01-2026,14-02-2026,moi's bridge,180.50,170.00,160.25",
    '15-01-2026,14-02-2026,kapsabet-nandi,180.50,170.00,160.25',
    '15-01-2026,14-02-2026,  nairobi   west ,180.50,170.00,160.25',
    '15-01-2026,14-02-2026,"\tEL   WAK",180.50,170.00,160.25'
  )).map((r) => r.town)
  t.strictSame(towns, ["Murang'a", "Moi's Bridge", 'Kapsabet-Nandi', 'Nairobi West', 'El Wak'])
})

t.test('[D5] parsePriceCell gives exact two-decimal strings', async (t) => {
  const cases: Array<[string, string]> = [
    ['180.5', '180.50'], ['180', '180.00'], ['180.50', '180.50'], [' 180.5 ', '180.50'],
    ['0.01', '0.01'], ['007.5', '7.50'], ['0000.10', '0.10'], ['9999.99', '9999.99'],
    ['09999.99', '9999.99'], ['1234.05', '1234.05']
  ]
  for (const [raw, expected] of cases) t.equal(parsePriceCell(raw), expected, JSON.stringify(raw))
})

t.test('[D5] a price cell that is not a plain decimal is rejected with the raw cell', async (t) => {
  for (const raw of ['180,50', '1,234.50', '180.505', 'abc', '', '  ', '+180', '1e3', '.5', '180.', 'NaN', '١٨٠', ' 180 .5']) {
    t.strictSame(rejection(() => parsePriceCell(raw)), rejected(`Invalid price value: ${raw}`), JSON.stringify(raw))
  }
})

t.test('[D5] a price that is not > 0 or above 9999.99 is out of range', async (t) => {
  for (const raw of ['-1', '0', '0.00', '-0', '-180.50', '10000.00', '10000', '99999999999999999999.99']) {
    t.strictSame(rejection(() => parsePriceCell(raw)), rejected(`Price out of range: ${raw}`), raw)
  }
})

t.test('[D5] price errors in a file name the raw cell', async (t) => {
  const file = (cells: string) => csv(HEADER, `15-01-2026,14-02-2026,Nairobi,${cells}`)
  t.strictSame(rejection(() => parseCycleCsv(file('"180,50",170.00,160.25'))), rejected('Invalid price value: 180,50'))
  t.strictSame(rejection(() => parseCycleCsv(file('180.50,"1,234.50",160.25'))), rejected('Invalid price value: 1,234.50'))
  t.strictSame(rejection(() => parseCycleCsv(file('180.50,170.00,180.505'))), rejected('Invalid price value: 180.505'))
  t.strictSame(rejection(() => parseCycleCsv(file('180.50,abc,160.25'))), rejected('Invalid price value: abc'))
  t.strictSame(rejection(() => parseCycleCsv(file(',170.00,160.25'))), rejected('Invalid price value: '), 'empty cell')
  t.strictSame(rejection(() => parseCycleCsv(file('180.50,170.00, 1o0 '))), rejected('Invalid price value:  1o0 '))
  t.strictSame(rejection(() => parseCycleCsv(file('-1,170.00,160.25'))), rejected('Price out of range: -1'))
  t.strictSame(rejection(() => parseCycleCsv(file('180.50,0,160.25'))), rejected('Price out of range: 0'))
  t.strictSame(rejection(() => parseCycleCsv(file('180.50,170.00,10000.00'))), rejected('Price out of range: 10000.00'))
  t.strictSame(parseCycleCsv(file('9999.99,0.01, 42 ')), [row(2, 'Nairobi', ['9999.99', '0.01', '42.00'])])
})

t.test('[D6] an empty town or date cell names the column and line', async (t) => {
  const file = (cells: string) => csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25', cells)
  t.strictSame(rejection(() => parseCycleCsv(file(',14-02-2026,Mombasa,180.50,170.00,160.25'))),
    rejected('Missing value for From on line 3'))
  t.strictSame(rejection(() => parseCycleCsv(file('15-01-2026,  ,Mombasa,180.50,170.00,160.25'))),
    rejected('Missing value for To on line 3'))
  t.strictSame(rejection(() => parseCycleCsv(file('15-01-2026,14-02-2026,,180.50,170.00,160.25'))),
    rejected('Missing value for Town on line 3'))
  t.strictSame(rejection(() => parseCycleCsv(file('15-01-2026,14-02-2026," ",180.50,170.00,160.25'))),
    rejected('Missing value for Town on line 3'), 'white space only')
})

t.test('[D6] a row with too few cells names the first missing column in canonical order', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,Nairobi'))),
    rejected('Missing value for Super (PMS) on line 2'))
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00'))),
    rejected('Missing value for Kerosene (IK) on line 2'))
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026'))),
    rejected('Missing value for To on line 2'))
  // Columns Kerosene, Town, From, …: the short row lacks From, To, Super, Diesel; From comes first.
  t.strictSame(rejection(() => parseCycleCsv(csv(
    'Kerosene (IK),Town,From,To,Super (PMS),Diesel (AGO)',
    '160.25,Nairobi'
  ))), rejected('Missing value for From on line 2'))
  // Town is empty and Super missing: Town precedes Super (PMS) in the canonical order.
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,'))),
    rejected('Missing value for Town on line 2'))
})

t.test('[D7] parseDateCell reads both formats strictly', async (t) => {
  t.equal(detectDateFormat('15-01-2026'), 'DD-MM-YYYY')
  t.equal(detectDateFormat(' 2026-01-15 '), 'YYYY-MM-DD')
  t.equal(parseDateCell('15-01-2026', 'DD-MM-YYYY'), '2026-01-15')
  t.equal(parseDateCell('2026-01-15', 'YYYY-MM-DD'), '2026-01-15')
  t.equal(parseDateCell('29-02-2024', 'DD-MM-YYYY'), '2024-02-29', 'leap day')
  t.equal(parseDateCell(' 14-12-2025 ', 'DD-MM-YYYY'), '2025-12-14')
  const bad: Array<[string, 'DD-MM-YYYY' | 'YYYY-MM-DD']> = [
    ['2026-01-15', 'DD-MM-YYYY'], ['15-01-2026', 'YYYY-MM-DD'], ['31-02-2026', 'DD-MM-YYYY'],
    ['29-02-2025', 'DD-MM-YYYY'], ['2026-13-15', 'YYYY-MM-DD'], ['00-01-2026', 'DD-MM-YYYY'],
    ['15-01-0000', 'DD-MM-YYYY'], ['5-01-2026', 'DD-MM-YYYY'], ['2026-1-15', 'YYYY-MM-DD'],
    ['15/01/2026', 'DD-MM-YYYY'], ['15-01-26', 'DD-MM-YYYY'], ['15-01-2026T00:00', 'DD-MM-YYYY']
  ]
  for (const [raw, format] of bad) {
    t.strictSame(rejection(() => parseDateCell(raw, format)), rejected(`Invalid date format: ${raw}`), `${raw} as ${format}`)
  }
  t.strictSame(rejection(() => detectDateFormat('Jan 15 2026')), rejected('Invalid date format: Jan 15 2026'))
})

t.test('[D7] the first date cell fixes the format: DD-MM-YYYY then ISO is rejected', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(
    HEADER,
    '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25',
    '2026-01-15,2026-02-14,Mombasa,180.50,170.00,160.25'
  ))), rejected('Invalid date format: 2026-01-15'))
})

t.test('[D7] the first date cell fixes the format: ISO then DD-MM-YYYY is rejected', async (t) => {
  const text = csv(
    HEADER,
    '2026-01-15,2026-02-14,Nairobi,180.50,170.00,160.25',
    '2026-01-15,14-02-2026,Mombasa,180.50,170.00,160.25'
  )
  t.strictSame(rejection(() => parseCycleCsv(text)), rejected('Invalid date format: 14-02-2026'))
  t.strictSame(parseCycleCsv(text.replace(',14-02-2026,', ',2026-02-14,')), [row(2), row(3, 'Mombasa')])
})

t.test('[D7] the leftmost date column of the first row decides, whatever its name', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(
    'Town,To,From,Super (PMS),Diesel (AGO),Kerosene (IK)',
    'Nairobi,2026-02-14,15-01-2026,180.50,170.00,160.25'
  ))), rejected('Invalid date format: 15-01-2026'))
})

t.test('[D7] an impossible or unreadable date is rejected with the raw cell', async (t) => {
  const file = (from: string) => csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25', `${from},14-02-2026,Mombasa,180.50,170.00,160.25`)
  t.strictSame(rejection(() => parseCycleCsv(file('31-02-2026'))), rejected('Invalid date format: 31-02-2026'))
  t.strictSame(rejection(() => parseCycleCsv(file(' 15/01/2026'))), rejected('Invalid date format:  15/01/2026'))
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '31-02-2026,14-03-2026,Nairobi,180.50,170.00,160.25'))),
    rejected('Invalid date format: 31-02-2026'), 'as the first date cell')
})

t.test('[D8] valid_from must be a 15th and valid_to the 14th of the next month', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '16-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'))),
    rejected('Invalid pricing cycle on line 2: From 16-01-2026 To 14-02-2026'))
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-03-2026,Nairobi,180.50,170.00,160.25'))),
    rejected('Invalid pricing cycle on line 2: From 15-01-2026 To 14-03-2026'))
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '2026-02-14,2026-01-15,Nairobi,180.50,170.00,160.25'))),
    rejected('Invalid pricing cycle on line 2: From 2026-02-14 To 2026-01-15'), 'swapped')
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25', '', '"15-01-2026", 15-02-2026,Mombasa,180.50,170.00,160.25'))),
    rejected('Invalid pricing cycle on line 4: From 15-01-2026 To  15-02-2026'), 'raw cells, physical line')
  t.strictSame(parseCycleCsv(csv(HEADER, '15-12-2025,14-01-2026,Nairobi,180.50,170.00,160.25')).map((r) => [r.validFrom, r.validTo]),
    [['2025-12-15', '2026-01-14']], 'across a year end')
})

t.test('[D9] duplicate rows are rejected', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(
    HEADER,
    '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25',
    '15-01-2026,14-02-2026,Mombasa,180.50,170.00,160.25',
    '',
    '15-01-2026,14-02-2026,Nairobi,181.00,170.00,160.25'
  ))), rejected('Duplicate row for Nairobi from 2026-01-15 on lines 2 and 5'))
})

t.test('[D9] duplicates are found after D4 normalisation', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(
    HEADER,
    "15-01-2026,14-02-2026,moi's  bridge,180.50,170.00,160.25",
    "15-01-2026,14-02-2026, MOI'S BRIDGE,180.50,170.00,160.25"
  ))), rejected("Duplicate row for Moi's Bridge from 2026-01-15 on lines 2 and 3"))
})

t.test('[D9] the same town in different cycles is not a duplicate', async (t) => {
  t.strictSame(parseCycleCsv(csv(
    HEADER,
    '15-12-2025,14-01-2026,Nairobi,180.50,170.00,160.25',
    '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'
  )).map((r) => [r.line, r.town, r.validFrom]), [[2, 'Nairobi', '2025-12-15'], [3, 'Nairobi', '2026-01-15']])
})

t.test('[D10] the first error in file order wins', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(
    HEADER,
    '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25',
    '15-01-2026,14-02-2026,Mombasa,180.50,abc,160.25',
    '15-01-2026,14-02-2026,,180.50,170.00,160.25',
    '31-02-2026,14-02-2026,Kisumu,180.50,170.00,160.25',
    '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'
  ))), rejected('Invalid price value: abc'))
})

t.test('[D10] within a row: a missing cell (D6) comes before bad cells', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '31-02-2026,14-02-2026,,abc,170.00,160.25'))),
    rejected('Missing value for Town on line 2'))
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '31-02-2026,14-02-2026,Nairobi,abc'))),
    rejected('Missing value for Diesel (AGO) on line 2'))
})

t.test('[D10] within a row: cells are checked left to right in the file column order', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '31-02-2026,14-02-2026,Nairobi,abc,170.00,160.25'))),
    rejected('Invalid date format: 31-02-2026'))
  t.strictSame(rejection(() => parseCycleCsv(csv(
    'Super (PMS),Diesel (AGO),Kerosene (IK),Town,From,To',
    'abc,170.00,160.25,Nairobi,31-02-2026,14-02-2026'
  ))), rejected('Invalid price value: abc'))
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,Nairobi,0,abc,160.25'))),
    rejected('Price out of range: 0'))
})

t.test('[D10] within a row: bad cells come before the cycle (D8), the cycle before duplicates (D9)', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(HEADER, '16-01-2026,14-02-2026,Nairobi,180.50,170.00,abc'))),
    rejected('Invalid price value: abc'))
  t.strictSame(rejection(() => parseCycleCsv(csv(
    HEADER,
    '16-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25',
    '16-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'
  ))), rejected('Invalid pricing cycle on line 2: From 16-01-2026 To 14-02-2026'))
})

t.test('[D10] a file whose only bad cell is on its last line is rejected', async (t) => {
  const lines = [HEADER]
  for (let i = 1; i <= 50; i++) lines.push(`15-01-2026,14-02-2026,Town ${i},180.50,170.00,160.25`)
  lines.push('15-01-2026,14-02-2026,Last Town,180.50,170.00,1O0.00')
  t.strictSame(rejection(() => parseCycleCsv(lines.join('\n'))), rejected('Invalid price value: 1O0.00'), 'no final line break')
  t.strictSame(rejection(() => parseCycleCsv(lines.join('\r\n') + '\r\n')), rejected('Invalid price value: 1O0.00'), 'final CRLF')
})

t.test('[D10] malformed quoting is rejected at the line where the row starts', async (t) => {
  t.strictSame(rejection(() => parseCycleCsv(csv(
    HEADER,
    '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25',
    '15-01-2026,14-02-2026,"Mombasa,180.50,170.00,160.25',
    '15-01-2026,14-02-2026,Kisumu,180.50,170.00,160.25'
  ))), rejected('Malformed quoted field on line 3'), 'unterminated')
  t.strictSame(rejection(() => parseCycleCsv(csv(
    HEADER,
    '15-01-2026,14-02-2026,"Mom"basa,180.50,170.00,160.25'
  ))), rejected('Malformed quoted field on line 2'), 'text after the closing quote')
})

t.test('[D14] a 100,000-row file parses to 100,000 rows', async (t) => {
  const lines = [HEADER]
  for (let c = 0; c < 400; c++) {
    const year = 2000 + Math.floor(c / 12)
    const month = (c % 12) + 1
    const from = `15-${String(month).padStart(2, '0')}-${year}`
    const to = month === 12 ? `14-01-${year + 1}` : `14-${String(month + 1).padStart(2, '0')}-${year}`
    for (let town = 0; town < 250; town++) lines.push(`${from},${to},Town ${town},${170 + town % 30}.${c % 100},165.5,150`)
  }
  const rows = parseCycleCsv(lines.join('\r\n') + '\r\n')
  t.equal(rows.length, 100_000)
  t.strictSame(rows[0], { line: 2, town: 'Town 0', validFrom: '2000-01-15', validTo: '2000-02-14', superPetrol: '170.00', diesel: '165.50', kerosene: '150.00' })
  t.strictSame(rows[99_999], { line: 100_001, town: 'Town 249', validFrom: '2033-04-15', validTo: '2033-05-14', superPetrol: '179.99', diesel: '165.50', kerosene: '150.00' })
})
