import { setImmediate, setTimeout } from 'node:timers/promises'
import type { Transaction } from '@electric-sql/pglite'
import type { PackedRows } from '../domain/price-rows.js'

/** Drizzle's PGlite transaction keeps PGlite's own transaction, whose `query` takes the COPY's data as a blob. */
export function pgliteTransactionOf (tx: unknown): Transaction {
  const client = (tx as { session?: { client?: { query?: unknown } } }).session?.client
  if (typeof client?.query !== 'function') {
    throw new Error('drizzle-orm internals changed: a PGlite transaction has no session.client (COPY needs it)')
  }
  return client as Transaction
}

const COPY = "COPY fuel_prices (town, valid_from, valid_to, super_petrol, diesel, kerosene) FROM '/dev/blob'"

/**
 * The packed batches as COPY statements of about `rowsPerCopy` rows each, read by PGlite from its
 * virtual /dev/blob. PGlite runs on the serving thread, so one COPY of a whole 10 MiB file would
 * hold every request back for seconds: between statements the event loop takes a turn.
 */
export async function copyBatchesPglite (client: Transaction, batches: Iterable<PackedRows>, rowsPerCopy: number): Promise<void> {
  let texts: Array<Uint8Array<ArrayBuffer>> = []
  let rows = 0
  const copy = async (): Promise<void> => {
    await client.query(COPY, [], { blob: new Blob(texts) })
    texts = []
    rows = 0
    // A timer, then an immediate from the timers phase: whatever phase this COPY ended in, the next
    // one starts only after the loop has polled the sockets.
    await setTimeout(0)
    await setImmediate()
  }
  for (const batch of batches) {
    texts.push(batch.text)
    rows += batch.lines.length
    if (rows >= rowsPerCopy) await copy()
  }
  if (rows > 0) await copy()
}
