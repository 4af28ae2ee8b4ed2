import t from '../support/file-test.js'
import { loadSampleTowns, sampleCycles } from '../../scripts/sample/generate.js'
import { IngestRejected } from '../../src/domain/errors.js'
import { BATCH_CHARS, cycleCsvBatches, parseCycleCsv } from '../../src/ingest/csv.js'
import type { PriceRow } from '../../src/domain/price-rows.js'

/**
 * D46: the ingest reads a file in pieces cut at line breaks. Whatever the size of the pieces, the
 * rows and the first error must be those of reading the file in one piece, which
 * test/ingest/csv.test.ts pins down exactly.
 */

const HEADER = 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)'
const JAN = '15-01-2026,14-02-2026'
const FEB = '15-02-2026,14-03-2026'

type Outcome = { rows: PriceRow[] } | { error: unknown }

function outcome (read: () => PriceRow[]): Outcome {
  try {
    return { rows: read() }
  } catch (err) {
    if (!(err instanceof IngestRejected)) throw err
    return { error: err.detail }
  }
}

const inPieces = (text: string, batchChars: number): PriceRow[] => [...cycleCsvBatches(text, batchChars)].flat()

const good = [
  HEADER,
  `${JAN},Nairobi,180.50,170.00,160.25`,
  `${JAN},Mombasa,177.3,167,157.05`,
  '',
  `${JAN},  kisumu ,0181.00,171.00,161.00`,
  '   ',
  ',,,,,',
  `${FEB},Nairobi,182.50,172.00,162.25`,
  `${FEB},Mombasa,179.30,169.00,159.05`,
  `${FEB},Kisumu,183.00,173.00,163.00`
]

/** Town, From, an extra column, To, Kerosene, Diesel, Super; a blank line stays blank. */
function reorder (line: string): string {
  const c = line.split(',')
  return line.replace(/[ ,]/g, '') === '' ? line : [c[2], c[0], 'x', c[1], c[5], c[4], c[3]].join(',')
}

/** Files that parse, and files that fail in every way D4–D10 name, early, late and across pieces. */
const corpus: Array<[string, string]> = [
  ['good, LF', good.join('\n') + '\n'],
  ['good, no final line break', good.join('\n')],
  ['good, CRLF', good.join('\r\n') + '\r\n'],
  ['good, CR', good.join('\r') + '\r'],
  ['good, byte order mark', '\uFEFF' + good.join('\n') + '\n'],
  ['good, blank lines before the header and after the last row', '\n\n' + good.join('\n') + '\n\n\n'],
  ['good, columns reordered and an extra one', good.map(reorder).join('\n')],
  ['good, ISO dates', good.map((l) => l.replace('15-01-2026,14-02-2026', '2026-01-15,2026-02-14').replace('15-02-2026,14-03-2026', '2026-02-15,2026-03-14')).join('\n')],
  ['quoted cells, one spanning lines', [`${HEADER},Remarks`, `${JAN},"Nairobi",180.50,170.00,160.25,ok`, `${JAN},Mombasa,1,1,1,"two`, 'lines"'].join('\n')],
  ['empty file', ''],
  ['only blank lines', '\n\n   \n'],
  ['header only', HEADER + '\n'],
  ['header and blank lines only', HEADER + '\n\n,,,\n'],
  ['no header', good.slice(1).join('\n')],
  ['bad price on the last line', [...good.slice(0, -1), `${FEB},Kisumu,183.00,173.00,1O3.00`].join('\n') + '\n'],
  ['bad price on the first row', [HEADER, `${JAN},Nairobi,-1,170.00,160.25`, ...good.slice(2)].join('\n')],
  ['a date in the other format in the middle (D7)', [...good.slice(0, 5), '2026-02-15,2026-03-14,Nairobi,1,1,1', ...good.slice(5)].join('\n')],
  ['an impossible date', [...good.slice(0, 8), '31-02-2026,14-03-2026,Eldoret,1,1,1'].join('\n')],
  ['not a cycle (D8)', [...good, '16-02-2026,14-03-2026,Eldoret,1,1,1'].join('\n')],
  ['duplicate far apart (D9)', [...good, `${JAN},Nairobi,1,1,1`].join('\n')],
  ['duplicate after normalisation (D4, D9)', [...good, `${FEB},  NAIROBI ,1,1,1`].join('\n')],
  ['a missing cell (D6)', [...good, `${FEB},Eldoret,1,1`].join('\n')],
  ['a missing town (D6)', [...good, `${FEB},,1,1,1`].join('\n')],
  ['an invalid town name (D30)', [...good, `${FEB},=1+1,1,1,1`].join('\n')],
  ['two errors: the first in file order wins (D10)', [...good.slice(0, 3), `${JAN},Eldoret,abc,1,1`, ...good.slice(3), `${FEB},Nakuru,1,1,-5`].join('\n')],
  ['malformed quoting', [...good, `${FEB},"Eldoret,1,1,1`].join('\n')],
  ['more fields than the header (D48)', [...good.slice(0, 6), `${FEB},Eldoret,180,50,170.00,160.00`, ...good.slice(6)].join('\n')],
  ['a line break in a quoted town (D48)', [...good, `${FEB},"Eld`, 'oret",1,1,1'].join('\n')]
]

t.test('[D46] any cut into pieces gives the rows and the first error of the whole file', async (t) => {
  for (const [name, text] of corpus) {
    const whole = outcome(() => parseCycleCsv(text))
    for (const batchChars of [1, 2, 3, 5, 8, 13, 21, 40, 64, 100, 1000, BATCH_CHARS]) {
      t.strictSame(outcome(() => inPieces(text, batchChars)), whole, `${name}, pieces of ${batchChars}`)
    }
  }
  // The corpus covers both outcomes (a test of equality alone would also pass if both broke).
  t.strictSame(corpus.map(([, text]) => 'rows' in outcome(() => parseCycleCsv(text))), [
    true, true, true, true, true, true, true, true, true,
    false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false
  ])
  t.strictSame(outcome(() => parseCycleCsv(corpus[5]?.[1] as string)), { rows: parseCycleCsv(good.join('\n')).map((r) => ({ ...r, line: r.line + 2 })) })
  t.strictSame(outcome(() => parseCycleCsv(corpus[24]?.[1] as string)), { error: 'Invalid price value: abc' })
})

t.test('[D46] pieces are cut at line breaks and yielded as they are read', async (t) => {
  const text = good.join('\n') + '\n'
  // Pieces of one character: each line is its own piece; blank lines and the header yield nothing.
  t.strictSame([...cycleCsvBatches(text, 1)].map((batch) => batch.map((r) => r.line)), [[2], [3], [5], [8], [9], [10]])
  // A quote can hold a line break: a quoted file is one piece.
  t.strictSame([...cycleCsvBatches(corpus[8]?.[1] as string, 1)].map((batch) => batch.length), [2])
  // Rows before an error are yielded before the error is found.
  const reading = cycleCsvBatches([...good, `${FEB},Eldoret,1,1`].join('\n'), 1)
  const before: number[] = []
  t.throws(() => { for (const batch of reading) before.push(...batch.map((r) => r.line)) }, { name: 'IngestRejected', message: 'Missing value for Kerosene (IK) on line 11' })
  t.strictSame(before, [2, 3, 5, 8, 9, 10])
  // The 20,038-row sample (1.0 MB): 16 pieces of ~64 KiB.
  const sample = sampleCycles({ towns: loadSampleTowns(), cycles: 86, lastValidFrom: '2025-10-15' })
  const batches = [...cycleCsvBatches(sample)]
  t.equal(batches.length, 16)
  t.equal(batches.reduce((n, batch) => n + batch.length, 0), 20_038)
  t.strictSame(batches.flat(), parseCycleCsv(sample))
})
