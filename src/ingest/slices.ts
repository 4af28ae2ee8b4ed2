import { setImmediate as nextTurn } from 'node:timers/promises'
import type { CycleWindow } from '../domain/cycle.js'
import type { PriceRow } from '../domain/price-rows.js'
import { cycleCsvBatches, decodeCsv } from './csv.js'

/**
 * Long work on an upload runs in slices of a few milliseconds, each ended by a turn of the event
 * loop, so reads, /v1/health and SIGTERM are served while a file of any allowed size is parsed,
 * checked and reviewed (D57). The clock is read every 64 steps only: a step is one row or town.
 */
export const SLICE_MS = 4

export class Slices {
  private steps = 0
  private started = performance.now()

  /** For a loop of small steps: true when the current slice has run its time; then `await slices.turn()`. */
  due (): boolean {
    if ((++this.steps & 63) !== 0) return false
    return this.overdue()
  }

  /** For a loop of larger steps: the same, reading the clock each time. */
  overdue (): boolean {
    return performance.now() - this.started >= SLICE_MS
  }

  /** Lets every waiting callback run (I/O included), then starts a new slice. */
  async turn (): Promise<void> {
    await nextTurn()
    this.started = performance.now()
  }
}

/** UTF-8 decoded about this many bytes at a time, a turn of the event loop after each. */
const DECODE_SLICE_BYTES = 512 * 1024

/**
 * `decodeCsv` in slices: the same text, or the same refusal (decodeCsv's own, thrown again). Each
 * slice is cut before the first byte of a character and decoded at one go, as a streaming decoder
 * costs several times more CPU; only the first may lose a BOM.
 */
export async function decodeCsvInSlices (bytes: Uint8Array, slices: Slices): Promise<string> {
  if (bytes.length <= DECODE_SLICE_BYTES) return decodeCsv(bytes)
  const parts: string[] = []
  try {
    for (let at = 0; at < bytes.length;) {
      let end = Math.min(bytes.length, at + DECODE_SLICE_BYTES)
      // Back over continuation bytes (10xxxxxx), at most three: a character is at most four bytes.
      for (let back = 0; end < bytes.length && back < 3 && ((bytes[end] as number) & 0xc0) === 0x80; back++) end--
      const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: at > 0 })
      parts.push(decoder.decode(bytes.subarray(at, end)))
      at = end
      await slices.turn()
    }
  } catch {
    return decodeCsv(bytes)
  }
  return parts.join('')
}

/**
 * A file's text read a piece at a time (`cycleCsvBatches`: pieces of 64 KiB, about 1,300 rows and
 * a couple of milliseconds; the same rows and the same first error), a turn of the event loop
 * whenever a slice has run its time. Smaller pieces cost the ingest measurably more CPU.
 */
export async function * rowsInSlices (text: string, window: CycleWindow, slices: Slices): AsyncGenerator<PriceRow[], void, undefined> {
  for (const batch of cycleCsvBatches(text, undefined, window)) {
    yield batch
    if (slices.overdue()) await slices.turn()
  }
}
