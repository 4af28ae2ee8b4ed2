import t from '../support/file-test.js'
import { normalizeTown, townFilter } from '../../src/domain/town.js'

t.test('[D4] title-cases word by word, split on spaces and hyphens only', async (t) => {
  t.equal(normalizeTown("MURANG'A"), "Murang'a")
  t.equal(normalizeTown("moi's bridge"), "Moi's Bridge")
  t.equal(normalizeTown('kapsabet-nandi'), 'Kapsabet-Nandi')
  t.equal(normalizeTown('EL WAK'), 'El Wak')
})

t.test('[D4] trims and collapses inner white space', async (t) => {
  t.equal(normalizeTown('  nairobi \t  west  '), 'Nairobi West')
  t.equal(normalizeTown('eldama  ravine'), 'Eldama Ravine')
})

t.test('[D4][D21] the town filter is the canonical name; blank means absent', async (t) => {
  t.equal(townFilter('  moi\'s   BRIDGE '), "Moi's Bridge")
  t.equal(townFilter('   '), undefined)
  t.equal(townFilter(''), undefined)
  t.equal(townFilter(undefined), undefined)
})

t.test('[D4] typographic apostrophes read as `\'`, in uploads and in the town filter alike', async (t) => {
  // Right and left single quotation marks, reversed-9, modifier letter apostrophe, prime, fullwidth.
  for (const mark of ['\u2019', '\u2018', '\u201b', '\u02bc', '\u2032', '\uff07']) {
    t.equal(normalizeTown(`MURANG${mark}A`), "Murang'a", `U+${mark.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}`)
    t.equal(townFilter(`moi${mark}s bridge`), "Moi's Bridge")
  }
  t.equal(normalizeTown('Murang\u201ca'), 'Murang\u201ca', 'a double quotation mark is no apostrophe: left as it is, for D30 to refuse')
})
