import t from '../support/file-test.js'
import { IngestRejected } from '../../src/domain/errors.js'
import { decodeCsv, parseCycleCsv, parsePriceCell } from '../../src/ingest/csv.js'
import { HEADER, csv } from '../fixtures/ingest.js'
import { SAMPLE_TOWNS } from '../fixtures/towns.js'

/** Issue 46, D72: what a refused file says beside its unchanged `detail`; D4/D5 the lossless spellings now read. */

const HEADER_MISMATCH = 'CSV header must include From, To, Town, Super (PMS), Diesel (AGO), Kerosene (IK)'
const ALL_COLUMNS = ['From', 'To', 'Town', 'Super (PMS)', 'Diesel (AGO)', 'Kerosene (IK)']
const NOT_UTF8 = 'Uploaded file is not valid UTF-8 text.'
const SAVE = 'save the file as "CSV UTF-8 (Comma delimited) (*.csv)"'

/** The 400's body a call raised. */
function body (fn: () => unknown): unknown {
  try {
    fn()
  } catch (err) {
    if (err instanceof IngestRejected) return err.body()
    throw err
  }
  return 'no error'
}

/** A real cycle of the first `n` sample towns, as an export writes it (CRLF, DD-MM-YYYY). */
function cycleFile (n: number, header = HEADER, delimiter = ','): string {
  const rows = SAMPLE_TOWNS.slice(0, n).map((town, i) => ['15-01-2026', '14-02-2026', town, `${180 + i}.50`, '170.00', '160.25'].join(delimiter))
  return [header, ...rows].join('\r\n') + '\r\n'
}

t.test('[D72] UTF-16 with a byte order mark, little- and big-endian: the encoding and how to save as UTF-8', async (t) => {
  const text = cycleFile(3)
  const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])
  t.strictSame(body(() => decodeCsv(le)), {
    detail: NOT_UTF8, problem: 'encoding', encoding: 'UTF-16LE', hint: `The file is UTF-16 text (little-endian; Excel calls it "Unicode Text"): ${SAVE} instead.`
  })
  const be = Buffer.from(le).swap16() // the same text, each code unit's bytes the other way round
  t.strictSame(body(() => decodeCsv(be)), { detail: NOT_UTF8, problem: 'encoding', encoding: 'UTF-16BE', hint: `The file is UTF-16 text (big-endian): ${SAVE} instead.` })
})

t.test('[D72] Windows-1252 text: the line of its first accented byte, the letter it stands for', async (t) => {
  const text = cycleFile(2) + '15-01-2026,14-02-2026,Nyahururu Caf\u00e9,181.50,170.00,160.25\r\n'
  const latin = Buffer.from(text, 'latin1') // é is 0xE9 in Windows-1252 as in Latin-1
  t.strictSame(body(() => decodeCsv(latin)), {
    detail: NOT_UTF8,
    line: 4,
    problem: 'encoding',
    encoding: 'Windows-1252',
    hint: `Line 4 has the byte 0xE9, "é" in Windows-1252 ("ANSI"), the encoding the file seems to be saved in: ${SAVE} instead.`
  })
  t.equal(decodeCsv(Buffer.from(text, 'utf8')), text, 'the same text saved as UTF-8 is read')
})

t.test('[D72] invalid UTF-8 in a UTF-8 file: the line where it fails, lines counted as D6 counts them', async (t) => {
  const bytes = Buffer.concat([Buffer.from(`${HEADER}\r\n15-01-2026,14-02-2026,Murang\u2019a,180.50,170.00,160.25\r\r\n15-01-2026,14-02-2026,Ny`), Buffer.from([0xff]), Buffer.from('eri,1,1,1\n')])
  t.strictSame(body(() => decodeCsv(bytes)), {
    detail: NOT_UTF8, line: 4, problem: 'invalid_utf8', hint: `The text stops being UTF-8 on line 4, at the byte 0xFF: ${SAVE}, or retype that character.`
  }, 'a lone CR ends a line, CRLF ends one')
  const cut = Buffer.concat([Buffer.from('From,To,\u00e9'), Buffer.from([0xe2, 0x82])]) // a sequence cut short at the end
  t.strictSame(body(() => decodeCsv(cut)), {
    detail: NOT_UTF8, line: 1, problem: 'invalid_utf8', hint: `The text stops being UTF-8 on line 1, at the byte 0xE2: ${SAVE}, or retype that character.`
  })
  t.strictSame(body(() => decodeCsv(new Uint8Array([0x41, 0x00, 0x81]))), {
    detail: NOT_UTF8, line: 1, problem: 'invalid_utf8', hint: `The text stops being UTF-8 on line 1, at the byte 0x81: ${SAVE}, or retype that character.`
  }, 'a byte Windows-1252 leaves undefined is not taken for it')
})

t.test('[D72] a semicolon export with comma decimals: the delimiter, the header cells as found', async (t) => {
  const excel = cycleFile(3, 'From;To;Town;Super (PMS);Diesel (AGO);Kerosene (IK)', ';').replace(/(\d)\.(\d\d)/g, '$1,$2')
  t.match(excel, /;Mombasa;180,50;170,00;160,25\r\n/, 'a real Excel export in a comma-decimal locale')
  t.strictSame(body(() => parseCycleCsv(excel)), {
    detail: HEADER_MISMATCH,
    line: 1,
    problem: 'delimiter',
    delimiter: ';',
    hint: 'The columns are separated by semicolons (;), not commas: save the file as "CSV UTF-8 (Comma delimited)", with a point before the decimals.',
    missing_columns: ALL_COLUMNS,
    found_columns: ['From;To;Town;Super (PMS);Diesel (AGO);Kerosene (IK)']
  })
  t.strictSame(body(() => parseCycleCsv(cycleFile(2, HEADER.replaceAll(',', '\t'), '\t'))), {
    detail: HEADER_MISMATCH,
    line: 1,
    problem: 'delimiter',
    delimiter: '\t',
    hint: 'The columns are separated by tabs, not commas: save the file as "CSV UTF-8 (Comma delimited)".',
    missing_columns: ALL_COLUMNS,
    found_columns: [HEADER.replaceAll(',', '\t')]
  })
})

t.test('[D72] a `sep=` first line: delete it; with `sep=;` save with commas too', async (t) => {
  t.strictSame(body(() => parseCycleCsv('sep=,\r\n' + cycleFile(2))), {
    detail: HEADER_MISMATCH,
    line: 1,
    problem: 'sep_line',
    hint: 'Line 1 is "sep=,", a line some spreadsheets add to name the separator: delete it, so that the header is the first line.',
    missing_columns: ALL_COLUMNS,
    found_columns: ['sep=', '']
  })
  t.strictSame(body(() => parseCycleCsv('\r\n"sep=;"\r\n' + cycleFile(2, 'From;To;Town;Super (PMS);Diesel (AGO);Kerosene (IK)', ';'))), {
    detail: HEADER_MISMATCH,
    line: 2,
    problem: 'sep_line',
    delimiter: ';',
    hint: 'Line 2 is "sep=;", a line some spreadsheets add to name the separator: delete it, so that the header is the first line, and save the file with commas between the columns.',
    missing_columns: ALL_COLUMNS,
    found_columns: ['sep=;']
  }, 'after a blank line, quoted')
})

t.test('[D72] a title row above the header: the line the header is really on', async (t) => {
  t.strictSame(body(() => parseCycleCsv('Pump prices, 15 January to 14 February 2026,,,,,\r\n\r\n' + cycleFile(3))), {
    detail: HEADER_MISMATCH,
    line: 1,
    problem: 'title_row',
    hint: 'Line 1 is not the header, line 3 is: delete the lines above the header, so that it is the first line.',
    missing_columns: ALL_COLUMNS,
    found_columns: ['Pump prices', ' 15 January to 14 February 2026', '', '', '', '', '']
  })
})

t.test('[D72] a misspelt column name: the cell, its position and the name meant', async (t) => {
  t.strictSame(body(() => parseCycleCsv(cycleFile(2, 'From,To,Town,Super (PMS),Desiel (AGO),Kerosene (IK)'))), {
    detail: HEADER_MISMATCH,
    line: 1,
    problem: 'misspelt_column',
    hint: '"Desiel (AGO)" (column 5) is not a column name this service knows: did you mean Diesel (AGO)?',
    missing_columns: ['Diesel (AGO)'],
    found_columns: ['From', 'To', 'Town', 'Super (PMS)', 'Desiel (AGO)', 'Kerosene (IK)']
  })
  t.strictSame(body(() => parseCycleCsv(cycleFile(2, 'Date,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)'))), {
    detail: HEADER_MISMATCH,
    line: 1,
    problem: 'missing_columns',
    hint: 'The header on line 1 has no column for From. Name the columns From, To, Town, Super (PMS), Diesel (AGO), Kerosene (IK); case, spaces and punctuation do not matter.',
    missing_columns: ['From'],
    found_columns: ['Date', 'To', 'Town', 'Super (PMS)', 'Diesel (AGO)', 'Kerosene (IK)']
  }, 'a name too far from any column is only missing')
})

t.test('[D72] an empty file, or one of blank lines: nothing found, every column missing', async (t) => {
  for (const text of ['', '\r\n\r\n', '\uFEFF', ',,,,,\n']) {
    t.strictSame(body(() => parseCycleCsv(text)), {
      detail: HEADER_MISMATCH,
      problem: 'empty_file',
      hint: 'The file holds no text: export the cycle again, with the header From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK) as its first line.',
      missing_columns: ALL_COLUMNS,
      found_columns: []
    }, JSON.stringify(text))
  }
})

t.test('[D48][D72] a hostile header is listed bounded: 32 cells at most, each cut as `detail` cuts a cell', async (t) => {
  const cells = Array.from({ length: 500 }, (_, i) => `c${i}${'x'.repeat(i === 0 ? 200 : 0)}`)
  const answer = body(() => parseCycleCsv(cells.join(',') + '\n')) as { found_columns: string[] }
  t.equal(answer.found_columns.length, 32)
  t.equal(answer.found_columns[0], `c0${'x'.repeat(98)}… (202 characters)`)
  t.equal(answer.found_columns[31], 'c31')
})

t.test('[D72] a price cell names its column and the rule it breaks', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['', 'empty_price', 'The cell is empty: every row needs all three prices.'],
    ['  ', 'empty_price', 'The cell is empty: every row needs all three prices.'],
    ['178,90', 'comma_decimal', 'Write a point before the decimals, not a comma: 178.90, not 178,90.'],
    ['1.234,50', 'comma_decimal', 'Write a point before the decimals, not a comma: 178.90, not 178,90.'],
    ['1,234.50', 'thousands_separator', 'Write the price without a thousands separator: 1234.50, not 1,234.50.'],
    ['1 234.50', 'thousands_separator', 'Write the price without a thousands separator: 1234.50, not 1,234.50.'],
    ['180.505', 'too_many_decimals', 'A price has at most two decimals, with zeros after them allowed: 178.90 or 178.900, not 178.905.'],
    ['KSh 178.90', 'currency_or_unit', 'Write the number alone, without a currency or unit: 178.90, not KSh 178.90.'],
    ['178.90 KES', 'currency_or_unit', 'Write the number alone, without a currency or unit: 178.90, not KSh 178.90.'],
    ['178/=', 'currency_or_unit', 'Write the number alone, without a currency or unit: 178.90, not KSh 178.90.'],
    ['1.789E+02', 'exponent', 'Write the price in full, not in exponent notation: 178.90, not 1.789E+02 (format the column as a number with two decimals).'],
    ['1e3', 'exponent', 'Write the price in full, not in exponent notation: 178.90, not 1.789E+02 (format the column as a number with two decimals).'],
    ['1O0.00', 'not_a_number', 'A price is a plain decimal number with a point, such as 178.90.'],
    ['abc', 'not_a_number', 'A price is a plain decimal number with a point, such as 178.90.'],
    ['+180', 'not_a_number', 'A price is a plain decimal number with a point, such as 178.90.']
  ]
  for (const [cell, problem, hint] of cases) {
    t.strictSame(body(() => parseCycleCsv(csv(HEADER, `15-01-2026,14-02-2026,Nairobi,181.00,"${cell}",161.00`))),
      { detail: `Invalid price value: ${cell}`, line: 2, column: 'Diesel (AGO)', problem, hint }, JSON.stringify(cell))
  }
  t.strictSame(body(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,Nairobi,181.00,170.00,0.00'))),
    { detail: 'Price out of range: 0.00', line: 2, column: 'Kerosene (IK)' }, 'out of range: the detail names the rule')
})

t.test('[D5] zeros after two decimals are read: 178.900 is 178.90; 180.505 is still refused', async (t) => {
  const read: Array<[string, string]> = [['178.900', '178.90'], ['178.9000', '178.90'], ['180.000', '180.00'], ['7.5000', '7.50'], [' 178.910 ', '178.91']]
  for (const [cell, price] of read) t.equal(parsePriceCell(cell), price, cell)
  for (const cell of ['180.505', '180.5051', '178.9001']) {
    t.strictSame(body(() => parsePriceCell(cell)), {
      detail: `Invalid price value: ${cell}`, problem: 'too_many_decimals', hint: 'A price has at most two decimals, with zeros after them allowed: 178.90 or 178.900, not 178.905.'
    }, cell)
  }
  t.strictSame(body(() => parsePriceCell('10000.000')), { detail: 'Price out of range: 10000.000' })
})

t.test('[D72] a date cell names its column, the file\'s format and how the cell is written', async (t) => {
  const file = (first: string, second: string): string => csv(HEADER, `${first},14-01-2027,Nairobi,1,1,1`, `${second},14-01-2027,Mombasa,1,1,1`)
  const inFile = (seen: string) => ({ problem: 'date_format', date_format: 'DD-MM-YYYY', hint: `This file's dates are DD-MM-YYYY (like 15-01-2026), the format of its first date cell; this cell is ${seen}.` })
  const cases: Array<[string, object]> = [
    ['15/12/2026', inFile('written with "/" instead of "-"')],
    ['15.12.2026', inFile('written with "." instead of "-"')],
    ['15-12-26', inFile('written with a two-digit year')],
    ['2026-12-15 00:00:00', inFile('written with a time after the date')],
    ['2026-12-15', inFile('written YYYY-MM-DD')],
    ['5-12-2026', inFile('written without a leading zero (05, not 5)')],
    ['Dec 15', inFile('not a date in either format')],
    ['31-11-2026', { problem: 'no_such_date', date_format: 'DD-MM-YYYY', hint: "The cell is written DD-MM-YYYY, the format of this file's dates, but no such day exists." }]
  ]
  for (const [cell, fields] of cases) {
    t.strictSame(body(() => parseCycleCsv(file('15-12-2026', cell))), { detail: `Invalid date format: ${cell}`, line: 3, column: 'From', ...fields }, cell)
  }
  t.strictSame(body(() => parseCycleCsv(file('2026-12-15 00:00:00', '15-12-2026'))), {
    detail: 'Invalid date format: 2026-12-15 00:00:00',
    line: 2,
    column: 'From',
    problem: 'date_format',
    hint: 'Write dates as DD-MM-YYYY (15-01-2026) or YYYY-MM-DD (2026-01-15), one format for the whole file; this cell is written with a time after the date.'
  }, 'the first date cell: no format fixed yet')
  t.strictSame(body(() => parseCycleCsv(csv(HEADER, '2026-12-15,15-01-2027,Nairobi,1,1,1'))), {
    detail: 'Invalid date format: 15-01-2027',
    line: 2,
    column: 'To',
    problem: 'date_format',
    date_format: 'YYYY-MM-DD',
    hint: "This file's dates are YYYY-MM-DD (like 2026-01-15), the format of its first date cell; this cell is written DD-MM-YYYY."
  }, 'the To column')
})

t.test('[D72] a missing cell and a bad town name their column', async (t) => {
  t.strictSame(body(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,Nairobi,181.00'))), { detail: 'Missing value for Diesel (AGO) on line 2', line: 2, column: 'Diesel (AGO)' })
  t.strictSame(body(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,=1+1,181.00,170.00,160.00'))), { detail: 'Invalid town name on line 2: =1+1', line: 2, column: 'Town' })
})

t.test('[D4] typographic apostrophes in a town read as the ASCII one: one town, not two', async (t) => {
  const spellings = ['Murang\u2019a', 'MURANG\u2018A', 'murang\u201ba', 'Murang\u02bca', 'Murang\u2032a', 'Murang\uff07a', "Murang'a"]
  const rows = parseCycleCsv(csv(HEADER, ...spellings.map((town, i) => `15-${String(i + 1).padStart(2, '0')}-2026,14-${String(i + 2).padStart(2, '0')}-2026,${town},181.00,170.00,160.00`)))
  t.strictSame(rows.map((r) => r.town), spellings.map(() => "Murang'a"))
  t.strictSame(body(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,Murang\u2019a,181.00,170.00,160.00', "15-01-2026,14-02-2026,Murang'a,181.00,170.00,160.00"))),
    { detail: "Duplicate row for Murang'a from 2026-01-15 on lines 2 and 3", line: 3 }, 'in one cycle, the two spellings are a duplicate (D9)')
})
