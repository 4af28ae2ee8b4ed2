import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from '../support/file-test.js'
import type { CycleWindow } from '../../src/domain/cycle.js'
import { IngestRejected } from '../../src/domain/errors.js'
import { packRows, rowsOfBatch, unpackRows, type PriceRow } from '../../src/domain/price-rows.js'
import { OFF_THREAD_BYTES, csvRowBatches, type ReadsBeside } from '../../src/ingest/csv-off-thread.js'
import { cycleCsvBatches, parseCycleCsv } from '../../src/ingest/csv.js'
import { Slices } from '../../src/ingest/slices.js'
import { notLowered, threadNiceness } from '../support/threads.js'

/**
 * A large upload is decoded and parsed in a worker thread, a small one on the main thread: either
 * way the same rows, and the same refusal with the same line and fields.
 */

const WINDOW: CycleWindow = { earliest: '1990-01-15', latest: '2026-12-15' }
const HEADER = 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)'

/** A file of `towns` towns in November 2026, at least `minBytes` long. */
function file (towns: number): string {
  const lines = [HEADER]
  for (let i = 0; i < towns; i++) lines.push(`15-11-2026,14-12-2026,Town ${String(i).padStart(6, '0')},${180 + (i % 9)}.50,170.00,150.25`)
  return lines.join('\n') + '\n'
}
const run = promisify(execFile)
const LARGE = Math.ceil(OFF_THREAD_BYTES / 50) // rows of ~55 bytes: past the threshold

async function read (bytes: Uint8Array, beside?: ReadsBeside): Promise<PriceRow[]> {
  const rows: PriceRow[] = []
  for await (const batch of csvRowBatches(bytes, WINDOW, new Slices(), beside)) rows.push(...rowsOfBatch(batch))
  return rows
}

async function refusal (bytes: Uint8Array): Promise<IngestRejected> {
  const err = await read(bytes).then(() => undefined, (e: unknown) => e)
  if (!(err instanceof IngestRejected)) throw new Error(`expected an IngestRejected, got ${String(err)}`)
  return err
}

t.test('a file past the threshold gives the same rows as the parser on this thread, and its bytes went to the worker', async (t) => {
  const text = file(LARGE)
  const bytes = new TextEncoder().encode(text)
  t.ok(bytes.length >= OFF_THREAD_BYTES, `${bytes.length} bytes`)
  const rows = await read(bytes)
  t.equal(rows.length, LARGE)
  t.strictSame(rows, parseCycleCsv(text, WINDOW))
  // A buffer of its own is transferred, not copied: here it is now empty.
  t.equal(bytes.byteLength, 0, 'transferred to the worker thread')
})

t.test('a small file is parsed here, its bytes untouched', async (t) => {
  const text = file(10)
  const bytes = new TextEncoder().encode(text)
  t.strictSame(await read(bytes), parseCycleCsv(text, WINDOW))
  t.equal(bytes.byteLength, text.length)
})

t.test('a view into a larger buffer is copied for the worker, so the buffer it shares stays whole', async (t) => {
  const text = file(LARGE)
  const encoded = new TextEncoder().encode(text)
  const shared = new Uint8Array(encoded.length + 16)
  shared.set(encoded, 8)
  const view = shared.subarray(8, 8 + encoded.length)
  t.equal((await read(view)).length, LARGE)
  t.strictSame([shared.byteLength, view.byteLength, view[0]], [encoded.length + 16, encoded.length, 'F'.charCodeAt(0)])
})

t.test('a refusal from the worker is the one the parser gives here: detail, line and fields', async (t) => {
  const lines = file(LARGE).split('\n')
  const cases: Record<string, string> = {
    'a bad price near the end': [...lines.slice(0, -3), (lines.at(-3) as string).replace('170.00', 'abc'), ...lines.slice(-2)].join('\n'),
    'a duplicate town': [...lines.slice(0, -1), lines[1], ''].join('\n'),
    'a cycle outside the window': [...lines.slice(0, -1), '15-11-1980,14-12-1980,Old Town,1.00,1.00,1.00', ''].join('\n'),
    'bytes that are not UTF-8': '' // built below
  }
  for (const [name, text] of Object.entries(cases)) {
    const bytes = name === 'bytes that are not UTF-8'
      ? Uint8Array.from([...new TextEncoder().encode(file(LARGE)), 0xff, 0x0a])
      : new TextEncoder().encode(text)
    const expected = await (async () => {
      try {
        parseCycleCsv(name === 'bytes that are not UTF-8' ? '' : text, WINDOW)
      } catch (err) {
        return err as IngestRejected
      }
      return undefined
    })()
    const got = await refusal(bytes)
    if (name === 'bytes that are not UTF-8') {
      t.match(got.body(), { detail: /not valid UTF-8/ }, name)
      t.equal(got.line, LARGE + 2, `${name}: the line of the first bad byte`)
      continue
    }
    t.ok(expected !== undefined, `${name}: refused on this thread too`)
    t.strictSame(got.body(), expected?.body(), name)
    t.equal(got.statusCode, 400)
  }
})

t.test('packed rows keep every town as given, COPY\'s escapes undone, and their cycles', async (t) => {
  // The parser refuses such names; rows from the seed and tests reach the writer as given.
  const odd = ['Back\\slash', 'Tab\there', 'Line\nbreak', 'Carriage\rreturn', '\\t literally', 'Plain']
  const rows: PriceRow[] = odd.map((town, i) => ({ line: i + 2, town, validFrom: i < 3 ? '2026-10-15' : '2026-11-15', validTo: i < 3 ? '2026-11-14' : '2026-12-14', superPetrol: `18${i}.00`, diesel: '170.00', kerosene: '150.00' }))
  const packed = packRows(rows)
  t.strictSame(unpackRows(packed), rows)
  t.equal(new TextDecoder().decode(packed.text).split('\n')[0], 'Back\\\\slash\t2026-10-15\t2026-11-14\t180.00\t170.00\t150.00', 'as COPY reads it')
  t.strictSame(packed.cycles, [{ validFrom: '2026-11-15', validTo: '2026-12-14' }, { validFrom: '2026-10-15', validTo: '2026-11-14' }])
  t.strictSame(unpackRows(packRows([])), [])
})

t.test('the worker starts under tsx too (`npm run dev`, the scripts), which registers its loader in the main thread only on Node 20', async (t) => {
  const source = (name: string): string => JSON.stringify(new URL(`../../src/ingest/${name}`, import.meta.url).href)
  const code = `
    const { csvRowBatches } = await import(${source('csv-off-thread.ts')})
    const { Slices } = await import(${source('slices.ts')})
    const lines = [${JSON.stringify(HEADER)}]
    for (let i = 0; i < ${LARGE}; i++) lines.push('15-11-2026,14-12-2026,Town ' + i + ',180.00,170.00,150.00')
    const bytes = new TextEncoder().encode(lines.join('\\n'))
    let rows = 0
    for await (const batch of csvRowBatches(bytes, ${JSON.stringify(WINDOW)}, new Slices())) rows += batch.lines.length
    console.log(JSON.stringify({ rows, transferred: bytes.byteLength === 0 }))`
  // Tap's own module hooks stay out: the process has tsx's alone, as `npm run dev` does.
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }
  })
  t.strictSame(JSON.parse(stdout), { rows: LARGE, transferred: true })
})

t.test('the worker sends each batch as it parses it: a refusal near the end comes after the batches before it', async (t) => {
  const lines = file(LARGE * 3).split('\n')
  const text = [...lines.slice(0, -3), (lines.at(-3) as string).replace('170.00', 'abc'), ...lines.slice(-2)].join('\n')
  let inThread = 0
  t.throws(() => { for (const _ of cycleCsvBatches(text, undefined, WINDOW)) inThread++ }, { name: 'IngestRejected' })
  let yielded = 0
  const err = await (async () => {
    for await (const _ of csvRowBatches(new TextEncoder().encode(text), WINDOW, new Slices())) yielded++
  })().then(() => undefined, (e: unknown) => e)
  t.type(err, IngestRejected)
  t.ok(inThread >= 2, `${inThread} batches before the bad row`)
  t.equal(yielded, inThread, 'every batch before the bad row reached the reader first')
})

t.test('while other requests come in, the parse rests between batches; idle, or with only older requests, it never does', async (t) => {
  const text = file(LARGE)
  const parse = async (beside: ReadsBeside): Promise<number> => {
    t.strictSame(await read(new TextEncoder().encode(text), beside), parseCycleCsv(text, WINDOW))
    return beside.restedMs ?? -1
  }
  const now = (): number => performance.now()
  t.ok(await parse({ since: 0, lastRequestAt: now }) > 0, 'a request just came: it rested')
  t.equal(await parse({ since: 0, lastRequestAt: () => 0 }), 0, 'no request since the upload began')
  t.equal(await parse({ since: 0, lastRequestAt: () => now() - 1000 }), 0, 'the latest request is a second old')
  const since = now()
  t.equal(await parse({ since, lastRequestAt: () => since }), 0, 'the upload\'s own request is not a read')
  // A serving thread too busy to read any batch's message before the parse ends (two cores
  // shared by four test files did it): the reads going on when the upload began decide.
  const beside: ReadsBeside = { since: 0, lastRequestAt: now }
  const rows = read(new TextEncoder().encode(text), beside)
  for (const until = now() + 1000; now() < until;); // this thread busy: no message read for a second
  t.strictSame(await rows, parseCycleCsv(text, WINDOW))
  t.ok((beside.restedMs ?? 0) > 0, `it rested all the same (${(beside.restedMs ?? 0).toFixed(1)} ms)`)
})

t.test('while reads go on as a large file begins, the writer gets its first rows once the whole file is parsed: parse and COPY take turns', async (t) => {
  const now = (): number => performance.now()
  const lines = file(LARGE * 3).split('\n')
  const bad = [...lines.slice(0, -3), (lines.at(-3) as string).replace('170.00', 'abc'), ...lines.slice(-2)].join('\n')
  const refused: ReadsBeside = { since: 0, lastRequestAt: now }
  let yielded = 0
  const err = await (async () => {
    for await (const _ of csvRowBatches(new TextEncoder().encode(bad), WINDOW, new Slices(), refused)) yielded++
  })().then(() => undefined, (e: unknown) => e)
  t.type(err, IngestRejected)
  t.equal(refused.tookTurns, true)
  t.equal(yielded, 0, 'a refusal near the end reached the writer before any batch')

  const text = lines.join('\n')
  const beside: ReadsBeside = { since: 0, lastRequestAt: now }
  const rows: PriceRow[] = []
  let parsedAtFirstBatch: boolean | undefined
  for await (const batch of csvRowBatches(new TextEncoder().encode(text), WINDOW, new Slices(), beside)) {
    parsedAtFirstBatch ??= beside.restedMs !== undefined
    rows.push(...rowsOfBatch(batch))
  }
  t.equal(parsedAtFirstBatch, true, 'the parse had ended when the first batch reached the writer')
  t.strictSame(rows, parseCycleCsv(text, WINDOW))

  const idle: ReadsBeside = { since: 0, lastRequestAt: () => 0 }
  t.strictSame(await read(new TextEncoder().encode(text), idle), parseCycleCsv(text, WINDOW))
  t.equal(idle.tookTurns, false, 'idle, they run side by side')
})

t.test('the worker parses at the lowest priority, beside every thread but the serving one; one whose reader gives up is ended, and the next upload starts another', { skip: existsSync('/proc/thread-self') ? false : 'threads have no nice value of their own outside Linux' }, async (t) => {
  const text = file(LARGE * 3)
  t.equal((await read(new TextEncoder().encode(text))).length, LARGE * 3)
  const parsed = threadNiceness()
  t.same(notLowered(parsed), [], 'the idle worker and every other thread but the serving one at nice 19')
  t.equal(parsed.get(process.pid), 0, 'the serving thread keeps its priority')
  const batches = csvRowBatches(new TextEncoder().encode(text), WINDOW, new Slices())
  t.equal((await batches.next()).done, false)
  await batches.return()
  const ended = (): number[] => { const now = threadNiceness(); return [...parsed.keys()].filter((id) => !now.has(id)) }
  for (let i = 0; i < 100 && ended().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.ok(ended().length > 0, 'the abandoned worker\'s thread ended: not kept')
  const abandoned = threadNiceness()
  t.equal((await read(new TextEncoder().encode(text))).length, LARGE * 3, 'a new worker parses the next file')
  const again = threadNiceness()
  // Its thread, and under the tests' TypeScript loader on Node 20 the loader's own thread.
  t.ok([...again.keys()].filter((id) => !abandoned.has(id)).length > 0, 'in a thread of its own')
  t.same(notLowered(again), [], 'at nice 19 too')
})
