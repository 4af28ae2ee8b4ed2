import { parentPort, type MessagePort } from 'node:worker_threads'
import type { CycleWindow } from '../domain/cycle.js'
import { IngestRejected } from '../domain/errors.js'
import { packRows } from '../domain/price-rows.js'
import { servingThreadFirst } from '../serving-thread-first.js'
import { cycleCsvBatches, decodeCsv } from './csv.js'

/**
 * A worker thread that decodes and parses uploaded files, one at a time (see csv-off-thread.ts):
 * each batch of validated rows goes to the job's `rows` port packed as soon as it is parsed, then
 * one outcome to the parent: how many batches were sent, or a refusal as its fields.
 */

export interface CsvJob {
  bytes: Uint8Array
  window: CycleWindow
  rows: MessagePort
  /** Set by the parent as the parse goes: after each batch, rest this many times as long as it took. */
  rest: Int32Array<SharedArrayBuffer> | undefined
}

export type CsvJobOutcome =
  // The outcome and the batches travel on different ports, so the parent counts the batches in.
  | { ok: true, batches: number, restedMs: number }
  | { ok: false, detail: string, line: number | undefined, fields: IngestRejected['fields'] }

const sleeper = new Int32Array(new SharedArrayBuffer(4))

function parse ({ bytes, window, rows, rest }: CsvJob): CsvJobOutcome {
  try {
    let batches = 0
    let restedMs = 0
    let started = performance.now()
    for (const batch of cycleCsvBatches(decodeCsv(bytes), undefined, window)) {
      const packed = packRows(batch)
      rows.postMessage(packed, [packed.text.buffer, packed.lines.buffer])
      batches++
      const times = rest === undefined ? 0 : Atomics.load(rest, 0)
      if (times > 0) {
        const took = performance.now() - started
        Atomics.wait(sleeper, 0, 0, took * times)
        restedMs += performance.now() - started - took
      }
      started = performance.now()
    }
    return { ok: true, batches, restedMs }
  } catch (err) {
    // Anything else is a fault: thrown, it ends the worker, an 'error' in the parent.
    if (!(err instanceof IngestRejected)) throw err
    return { ok: false, detail: err.detail as string, line: err.line, fields: err.fields }
  } finally {
    rows.close()
  }
}

if (parentPort !== null) {
  // The parse gives way to the serving thread: while an upload's COPY keeps the database busy, a
  // parse at full priority took the serving thread's turns on a two-core machine. Called here too:
  // this thread, and a loader's thread it may have started, did not exist when the ingest called it.
  servingThreadFirst()
  parentPort.on('message', (job: CsvJob) => { parentPort?.postMessage(parse(job)) })
}
