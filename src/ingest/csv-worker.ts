import { parentPort, type MessagePort } from 'node:worker_threads'
import type { CycleWindow } from '../domain/cycle.js'
import { IngestRejected } from '../domain/errors.js'
import { packRows } from '../domain/price-rows.js'
import { cycleCsvBatches, decodeCsv } from './csv.js'

/**
 * A worker thread that decodes and parses uploaded files, one at a time (see csv-off-thread.ts):
 * each batch of validated rows goes to the job's `rows` port packed, then one outcome to the
 * parent, a refusal as its fields.
 */

export interface CsvJob {
  bytes: Uint8Array
  window: CycleWindow
  rows: MessagePort
}

export type CsvJobOutcome =
  | { ok: true }
  | { ok: false, detail: string, line: number | undefined, fields: IngestRejected['fields'] }

function parse ({ bytes, window, rows }: CsvJob): CsvJobOutcome {
  try {
    for (const batch of cycleCsvBatches(decodeCsv(bytes), undefined, window)) {
      const packed = packRows(batch)
      rows.postMessage(packed, [packed.text.buffer, packed.lines.buffer])
    }
    return { ok: true }
  } catch (err) {
    // Anything else is a fault: thrown, it ends the worker, an 'error' in the parent.
    if (!(err instanceof IngestRejected)) throw err
    return { ok: false, detail: err.detail as string, line: err.line, fields: err.fields }
  } finally {
    rows.close()
  }
}

parentPort?.on('message', (job: CsvJob) => { parentPort?.postMessage(parse(job)) })
