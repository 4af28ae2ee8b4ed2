import { MessageChannel, Worker } from 'node:worker_threads'
import type { CycleWindow } from '../domain/cycle.js'
import { IngestRejected } from '../domain/errors.js'
import type { PackedRows, RowBatch } from '../domain/price-rows.js'
import { servingThreadFirst } from '../serving-thread-first.js'
import type { CsvJob, CsvJobOutcome } from './csv-worker.js'
import { decodeCsvInSlices, rowsInSlices, type Slices } from './slices.js'

/**
 * From this size on, a file is decoded and parsed in a worker thread: its CPU and, above all, the
 * parser's garbage (a quarter of the parse was collection) stay off the thread that serves reads.
 * A smaller file is parsed here in slices, cheaper than a trip to a worker.
 */
export const OFF_THREAD_BYTES = 256 * 1024

/** A worker left idle this long ends, so its memory goes back; the next large upload starts one (~0.1 s). */
const IDLE_WORKER_MS = 5000

/** The worker's entry: built as .js; run as .ts by tests, `npm run dev` and the tsx scripts. */
function startWorker (): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./csv-worker.js', import.meta.url))
  // A worker may lack the main thread's TypeScript loader (tsx registers in the main thread only on
  // Node 20; on Node 24 the tests' loader stays in the main thread, and Node's own type stripping
  // loads the entry but not its `.js` imports): then it registers tsx itself and loads the entry
  // again, under another URL, as the loader keeps the failed one's error.
  const entry = new URL('./csv-worker.ts', import.meta.url).href
  let tsx: string
  try {
    tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'))
  } catch {
    return new Worker(new URL(entry)) // no tsx: a runtime that loads .ts itself
  }
  return new Worker(`import(${JSON.stringify(entry)}).catch(async (err) => {
    if (err?.code !== 'ERR_UNKNOWN_FILE_EXTENSION' && err?.code !== 'ERR_MODULE_NOT_FOUND') throw err
    ;(await import(${tsx})).register()
    await import(${JSON.stringify(`${entry}?tsx`)})
  })`, { eval: true })
}

/**
 * Readers come first. Idle, an upload's parse runs flat out beside its COPY, each on a core of its
 * own, and the upload costs about its COPY. While other requests arrive as it begins, the two take
 * turns instead: the writer gets the first batch once the whole file is parsed, so the parse and
 * PostgreSQL's COPY never hold both cores at once; and while requests arrive, the parse rests three
 * times as long as each batch took. The upload then takes longer, and the readers' slowest answers
 * come about a third sooner than with the two side by side (bench/NOTES.md has the figures).
 */
export interface ReadsBeside {
  /** performance.now() of the latest request the service took. */
  lastRequestAt: () => number
  /** performance.now() of the upload's own request, which is not a read. */
  since: number
  /** Set as the upload begins: the parse and the write take turns, as reads were going on. */
  tookTurns?: boolean
  /** Set once the file is parsed: how long the parse gave way. */
  restedMs?: number
}
const REST_WHILE_READS = 3
/** Requests this recent count as reads going on. */
const READS_RECENT_MS = 50

function readsGoingOn ({ lastRequestAt, since }: ReadsBeside): boolean {
  const last = lastRequestAt()
  return last > since && performance.now() - last < READS_RECENT_MS
}

/** Idle workers, reused: starting one costs more than parsing a 20,000-row file. At most one per upload at once. */
const idle: Array<{ worker: Worker, timer: NodeJS.Timeout }> = []

function takeWorker (): Worker {
  // Threads started since the last call (libuv's pool starts on first use) have the serving
  // thread's priority until then; a new worker lowers its own.
  servingThreadFirst()
  const kept = idle.pop()
  if (kept !== undefined) {
    clearTimeout(kept.timer)
    return kept.worker
  }
  const worker = startWorker()
  worker.unref() // an idle worker never holds the process open
  return worker
}

function giveBack (worker: Worker): void {
  const timer = setTimeout(() => {
    idle.splice(idle.findIndex((kept) => kept.worker === worker), 1)
    void worker.terminate()
  }, IDLE_WORKER_MS).unref()
  idle.push({ worker, timer })
}

/** The worker's answer to one job; it ends on a fault, which rejects. */
function run (worker: Worker, job: CsvJob): Promise<CsvJobOutcome> {
  return new Promise((resolve, reject) => {
    const settle = (): void => {
      worker.off('message', onMessage)
      worker.off('error', onError)
      worker.off('exit', onExit)
    }
    const onMessage = (outcome: CsvJobOutcome): void => { settle(); resolve(outcome) }
    const onError = (err: Error): void => { settle(); reject(err) }
    const onExit = (code: number): void => { settle(); reject(new Error(`the CSV worker exited (code ${code}) without an answer`)) }
    worker.on('message', onMessage).on('error', onError).on('exit', onExit)
    worker.postMessage(job, [job.bytes.buffer as ArrayBuffer, job.rows])
  })
}

/**
 * A file's validated rows, batch by batch: as rows when parsed here, packed from a worker as it
 * parses them, so the writer's COPY runs while the rest of the file is still being checked. A
 * refusal is thrown where it is met, after the batches before it; the writer's transaction then
 * rolls back, so nothing of a refused file is kept (spec 4.5).
 */
export async function * csvRowBatches (bytes: Uint8Array, window: CycleWindow, slices: Slices, beside?: ReadsBeside): AsyncGenerator<RowBatch, void, undefined> {
  if (bytes.length < OFF_THREAD_BYTES) {
    // Kept as rows: the writer packs them only for a COPY, and the dry run reads them as they are.
    yield* rowsInSlices(await decodeCsvInSlices(bytes, slices), window, slices)
    return
  }
  const { port1: rows, port2 } = new MessageChannel()
  // The worker takes the bytes without a copy when they are a buffer of their own.
  const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes)
  const worker = takeWorker()
  const arrived: Array<PackedRows | undefined> = []
  let outcome: CsvJobOutcome | undefined
  let fault: unknown
  let wake: (() => void) | undefined
  const rest = beside === undefined ? undefined : new Int32Array(new SharedArrayBuffer(4))
  const judgeReads = (): void => { if (rest !== undefined && beside !== undefined) Atomics.store(rest, 0, readsGoingOn(beside) ? REST_WHILE_READS : 0) }
  // Judged before the first batch too: a busy thread may read no batch message until the parse is done.
  judgeReads()
  const turns = beside !== undefined && readsGoingOn(beside)
  if (beside !== undefined) beside.tookTurns = turns
  // Batches are taken as they come: the writer's COPY sends each while the worker parses on.
  rows.on('message', (batch: PackedRows) => {
    arrived.push(batch)
    judgeReads()
    wake?.()
  })
  const job = run(worker, { bytes: own, window, rows: port2, rest }).then(
    (answer) => {
      outcome = answer
      if (beside !== undefined && answer.ok) beside.restedMs = answer.restedMs
      wake?.()
    },
    (err: unknown) => { fault = err ?? new Error('the CSV worker failed'); wake?.() })
  let taken = 0
  try {
    for (;;) {
      if (fault !== undefined) throw fault
      if (outcome?.ok === false) throw new IngestRejected(outcome.detail, outcome.line, outcome.fields)
      // Taking turns, nothing goes to the writer before the parse's end (and a refusal comes first).
      if (taken < arrived.length && (!turns || outcome !== undefined)) {
        const batch = arrived[taken] as PackedRows
        arrived[taken++] = undefined // a yielded batch is the writer's to keep or drop
        yield batch
        if (slices.overdue()) await slices.turn()
      } else if (outcome?.ok === true && taken === outcome.batches) {
        return
      } else {
        await new Promise<void>((resolve) => { wake = resolve })
        wake = undefined
      }
    }
  } finally {
    rows.close()
    // A worker still parsing (its reader gave up: the database failed) is ended, not left to finish.
    if (outcome === undefined) void worker.terminate()
    else giveBack(worker)
    await job
  }
}
