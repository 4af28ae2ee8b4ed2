import t from '../support/file-test.js'
import { IngestRejected, echoCell } from '../../src/domain/errors.js'
import { isValidTownName, townFromCell } from '../../src/domain/town-name.js'
import { normalizeTown } from '../../src/domain/town.js'
import { REFUSED, SAMPLE_TOWNS } from '../fixtures/towns.js'

/** D30: which town names the ingest accepts, judged after D4 normalisation. */

t.test('[D30] all 233 sample towns are valid names, unchanged', async (t) => {
  t.equal(SAMPLE_TOWNS.length, 233)
  const refused = SAMPLE_TOWNS.filter((town) => !isValidTownName(town))
  t.strictSame(refused, [])
  t.strictSame(SAMPLE_TOWNS.map((town, i) => townFromCell(town, i + 2)), SAMPLE_TOWNS)
})

t.test('[D30] names in other scripts, with combining marks, digits and the allowed punctuation', async (t) => {
  const accepted: Array<[string, string]> = [
    ['ΝΈΑ ΣΜΎΡΝΗ', 'Νέα Σμύρνη'], // Greek
    ['москва', 'Москва'], // Cyrillic
    ['東京', '東京'], // CJK
    ['नैरोबी', 'नैरोबी'], // Devanagari: vowel signs are combining marks
    ['نيروبي', 'نيروبي'], // Arabic
    ['Me\u0301ru\u0300', 'M\u00e9r\u00f9'], // Latin, decomposed accents: stored composed (NFC, D48)
    ['ÉLDAMA', 'Éldama'],
    ['kilometre 14', 'Kilometre 14'],
    ['st. mary\'s', "St. Mary's"],
    ['kisumu (kondele)', 'Kisumu (Kondele)'], // D48: the first letter of a word, after a parenthesis
    ['kapsabet-nandi', 'Kapsabet-Nandi'],
    ['  nairobi\twest  ', 'Nairobi West'], // D4 first: white space of any kind is one space
    ['Nai\u00a0robi', 'Nai Robi'],
    ['K', 'K'],
    ['a'.repeat(64), 'A' + 'a'.repeat(63)]
  ]
  for (const [cell, town] of accepted) t.equal(townFromCell(cell, 2), town, JSON.stringify(cell))
})

t.test('[D30] every refused class: 400 naming the line and the raw cell', async (t) => {
  for (const [kind, cell] of REFUSED) {
    t.throws(() => townFromCell(cell, 7), new IngestRejected(`Invalid town name on line 7: ${echoCell(cell)}`), `${kind}: ${JSON.stringify(cell.slice(0, 40))}`)
    t.equal(isValidTownName(normalizeTown(cell)), false, kind)
  }
  const error = (() => { try { townFromCell(' =1+1 ', 3) } catch (err) { return err } })() as IngestRejected
  t.equal(error.statusCode, 400)
  t.equal(error.detail, 'Invalid town name on line 3:  =1+1 ', 'the cell exactly as in the file, spaces included')
})
