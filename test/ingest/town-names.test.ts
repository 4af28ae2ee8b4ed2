import t from '../support/file-test.js'
import { IngestRejected, echoCell } from '../../src/domain/errors.js'
import { parseCycleCsv } from '../../src/ingest/csv.js'
import { build, resetData } from '../helper.js'
import { HEADER, TOKEN, csv, rowCount, storedRows, upload } from '../fixtures/ingest.js'
import { REFUSED, SAMPLE_TOWNS } from '../fixtures/towns.js'

/** D30 in the CSV ingest: where in a row the town is checked, and the 400 over HTTP. */

/** Every cell quoted, so commas, quotes and control characters reach the parser intact. */
const quoted = (cell: string): string => `"${cell.replaceAll('"', '""')}"`
const GOOD = '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25'

function rejection (fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    if (err instanceof IngestRejected && err.statusCode === 400) return err.detail as string
    throw err
  }
  return 'no error'
}

t.test('[D30] a bad town names its line and the raw cell', async (t) => {
  t.equal(rejection(() => parseCycleCsv(csv(HEADER, GOOD, '', '15-01-2026,14-02-2026, =1+1 ,180.50,170.00,160.25'))),
    'Invalid town name on line 4:  =1+1 ', 'blank line 3 still counts (D6); the cell as in the file')
  t.equal(rejection(() => parseCycleCsv(csv(HEADER, `15-01-2026,14-02-2026,${quoted('A'.repeat(10_000))},1,1,1`))),
    `Invalid town name on line 2: ${'A'.repeat(100)}… (10000 characters)`) // D48: a prefix of a long cell
})

t.test('[D30][D10] order within a row: D6 missing cells first, then cells left to right, then D8 and D9', async (t) => {
  t.equal(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,=1+1,abc'))),
    'Missing value for Diesel (AGO) on line 2', 'D6 before any cell is judged')
  t.equal(rejection(() => parseCycleCsv(csv(HEADER, '31-02-2026,14-02-2026,=1+1,180.50,170.00,160.25'))),
    'Invalid date format: 31-02-2026', 'a bad date left of the town comes first')
  t.equal(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,=1+1,abc,170.00,160.25'))),
    'Invalid town name on line 2: =1+1', 'the town before a bad price right of it')
  t.equal(rejection(() => parseCycleCsv(csv('Super (PMS),Town,From,To,Diesel (AGO),Kerosene (IK)', 'abc,=1+1,15-01-2026,14-02-2026,170.00,160.25'))),
    'Invalid price value: abc', 'the file\'s column order decides, not the canonical one')
  t.equal(rejection(() => parseCycleCsv(csv(HEADER, '16-01-2026,14-02-2026,=1+1,180.50,170.00,160.25'))),
    'Invalid town name on line 2: =1+1', 'before the cycle rule (D8)')
  t.equal(rejection(() => parseCycleCsv(csv(HEADER, '15-01-2026,14-02-2026,,180.50,170.00,160.25'))),
    'Missing value for Town on line 2', 'an empty town is still D6')
})

t.test('[D30] the 233 sample towns and non-Latin names ingest as themselves', async (t) => {
  const names = [...SAMPLE_TOWNS, 'Νέα Σμύρνη', 'Москва', '東京', 'नैरोबी', 'نيروبي', "St. Mary's", 'Kilometre 14']
  const rows = parseCycleCsv(csv(HEADER, ...names.map((town) => `15-01-2026,14-02-2026,${town},180.50,170.00,160.25`)))
  t.strictSame(rows.map((r) => r.town), names)
})

t.test('[D30][D10] over HTTP: each refused class is a 400 with the exact detail, nothing written', async (t) => {
  await resetData()
  const app = await build(t, { config: { ingestToken: TOKEN } })
  for (const [kind, cell] of REFUSED) {
    const res = await upload(app, csv(HEADER, GOOD, `15-01-2026,14-02-2026,${quoted(cell)},181.00,171.00,161.00`))
    t.equal(res.statusCode, 400, kind)
    t.strictSame(res.json(), { detail: `Invalid town name on line 3: ${echoCell(cell)}`, line: 3, column: 'Town' }, `${kind}: ${JSON.stringify(cell.slice(0, 40))}`)
  }
  t.equal(await rowCount(), 0, 'not even the good first row of any file')
  const accepted = await upload(app, csv(HEADER, GOOD, '15-01-2026,14-02-2026,москва,181.00,171.00,161.00'))
  t.equal(accepted.statusCode, 201)
  t.strictSame((await storedRows()).map((r) => r.town), ['Nairobi', 'Москва'])
})
