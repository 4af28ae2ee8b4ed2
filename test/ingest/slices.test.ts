import { setImmediate as nextTurn } from 'node:timers/promises'
import t from '../support/file-test.js'
import type { IngestRejected } from '../../src/domain/errors.js'
import { decodeCsv } from '../../src/ingest/csv.js'
import { Slices, decodeCsvInSlices } from '../../src/ingest/slices.js'

/** D57: a file's bytes are decoded in slices of 512 KiB, with exactly decodeCsv's text or refusal. */

const SLICE = 512 * 1024
const encode = (text: string): Uint8Array => new TextEncoder().encode(text)
const bytesOf = (...parts: Array<string | Uint8Array>): Uint8Array => {
  const chunks = parts.map((p) => (typeof p === 'string' ? encode(p) : p))
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
  let at = 0
  for (const c of chunks) { out.set(c, at); at += c.length }
  return out
}

t.test('[D57] characters of two, three and four bytes across every cut decode as at one go', async (t) => {
  for (const char of ['é', '€', '😀']) {
    const width = encode(char).length
    // The character's bytes straddle the first cut at each possible offset.
    for (let shift = 0; shift < width; shift++) {
      const bytes = bytesOf('a'.repeat(SLICE - shift), char, 'b'.repeat(SLICE), char, 'c')
      t.equal(await decodeCsvInSlices(bytes, new Slices()), decodeCsv(bytes), `${char} cut after ${shift} of its ${width} bytes`)
    }
  }
})

t.test('[D57] a leading BOM is dropped, a U+FEFF met at a cut is kept', async (t) => {
  const bytes = bytesOf('\uFEFF', 'a'.repeat(SLICE - 3), '\uFEFF', 'b')
  const text = await decodeCsvInSlices(bytes, new Slices())
  t.equal(text, decodeCsv(bytes))
  t.strictSame([text.length, text.charCodeAt(0), text.charCodeAt(SLICE - 3)], [SLICE - 3 + 2, 0x61, 0xfeff])
})

t.test('[D57] bytes that are not UTF-8 are refused with decodeCsv\'s own 400, wherever they are', async (t) => {
  for (const bad of [[0xff], [0xe2, 0x82], [0x80, 0x80, 0x80, 0x80]]) {
    const bytes = bytesOf('a'.repeat(SLICE - 1), new Uint8Array(bad), 'b'.repeat(10))
    const refusal = await decodeCsvInSlices(bytes, new Slices()).then(() => undefined, (err: unknown) => err as IngestRejected)
    t.strictSame([refusal?.name, refusal?.statusCode, refusal?.detail], ['IngestRejected', 400, 'Uploaded file is not valid UTF-8 text.'], bad.map((b) => b.toString(16)).join(' '))
  }
})

t.test('[D57] the event loop turns between slices', async (t) => {
  const bytes = bytesOf('a'.repeat(4 * SLICE))
  let turns = 0
  let decoding = true
  const counting = (async () => { while (decoding) { await nextTurn(); turns++ } })()
  t.equal((await decodeCsvInSlices(bytes, new Slices())).length, 4 * SLICE)
  decoding = false
  await counting
  t.ok(turns >= 4, `${turns} turns while four slices were decoded`)
})
