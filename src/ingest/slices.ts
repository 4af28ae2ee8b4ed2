import { setImmediate as nextTurn } from 'node:timers/promises'
import type { CycleWindow } from '../domain/cycle.js'
import type { PriceRow } from '../domain/price-rows.js'
import { cycleCsvBatches, decodeCsv, notUtf8Refusal } from './csv.js'

/** Upload work runs in slices of a few ms, each ended by an event-loop turn, so reads and SIGTERM are served meanwhile (D57). */
const SLICE_MS = 4

export class Slices {
  private steps = 0
  private started = performance.now()

  /** For a loop of small steps: true when the current slice has run its time; then `await slices.turn()`. */
  due (): boolean {
    if ((++this.steps & 63) !== 0) return false
    return this.overdue()
  }

  overdue (): boolean {
    return performance.now() - this.started >= SLICE_MS
  }

  async turn (): Promise<void> {
    await nextTurn()
    this.started = performance.now()
  }
}

const DECODE_SLICE_BYTES = 512 * 1024

/** `decodeCsv` in slices cut at character starts; not a streaming decoder, which costs far more CPU. */
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
  } catch (err) {
    // A slice is cut at a character start, so it fails only where the whole file would.
    if (!(err instanceof TypeError)) throw err
    throw notUtf8Refusal(bytes)
  }
  return parts.join('')
}

/** `cycleCsvBatches` with an event-loop turn whenever a slice has run its time. */
export async function * rowsInSlices (text: string, window: CycleWindow, slices: Slices): AsyncGenerator<PriceRow[], void, undefined> {
  for (const batch of cycleCsvBatches(text, undefined, window)) {
    yield batch
    if (slices.overdue()) await slices.turn()
  }
}
