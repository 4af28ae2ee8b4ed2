import t from '../support/file-test.js'
import { prefersCsv } from '../../src/export/negotiation.js'

t.test('CSV export negotiation: text/csv must be preferred, JSON stays the default', async (t) => {
  const cases: Array<[string | undefined, boolean]> = [
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['application/json', false],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
    ['text/csv', true],
    ['TEXT/CSV; charset=utf-8', true],
    ['text/*', true],
    ['text/csv, */*;q=0.1', true],
    ['text/csv, application/json', false],
    ['text/csv;q=0.9, application/json', false],
    ['text/csv, application/json;q=0.5', true],
    ['text/csv;q=0', false],
    ['text/csv;q=0, */*', false],
    ['application/json;q=0, text/*;q=0.2', true],
    ['text/plain', false]
  ]
  for (const [accept, expected] of cases) t.equal(prefersCsv(accept), expected, `Accept: ${String(accept)}`)
})
