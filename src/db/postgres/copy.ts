import type { Writable } from 'node:stream'
import type postgres from 'postgres'
import type { PackedRows } from '../../domain/price-rows.js'

/** The ingest's COPY, through postgres.js and Drizzle internals: why and how each is checked, README.md here. */

export function transactionClientOf (tx: unknown): postgres.TransactionSql {
  const client = (tx as { session?: { client?: unknown } }).session?.client
  if (typeof client !== 'function' || !('unsafe' in client)) {
    throw new Error('drizzle-orm internals changed: a postgres-js transaction has no session.client (COPY needs it)')
  }
  return client as postgres.TransactionSql
}

interface CopyQuery { reject?: unknown, writable: () => Promise<Writable> }

type Done = (err?: Error | null) => void
/** The three callbacks postgres.js gives its COPY stream: CopyData, CopyDone, CopyFail. */
interface CopySink { _write: (chunk: Buffer, encoding: string, done: Done) => void, _final: (done: Done) => void, _destroy: (err: Error, done: Done) => void }

function copySink (stream: Writable): CopySink {
  const sink = stream as unknown as Partial<CopySink>
  if (typeof sink._write !== 'function' || typeof sink._final !== 'function' || typeof sink._destroy !== 'function') {
    throw new Error('postgres.js internals changed: a COPY stream has no _write, _final and _destroy')
  }
  return sink as CopySink
}

const settled = (start: (done: Done) => void): Promise<void> => new Promise((resolve, reject) => {
  start((err) => { if (err === undefined || err === null) resolve(); else reject(err) })
})

/**
 * A throw from `batches` sends CopyFail; the batches may still be arriving, each sent as it comes.
 * The stream's callbacks are called directly, as Node's stream code slows the HTTP sockets (D45).
 */
export async function copyBatches (client: postgres.TransactionSql, batches: Iterable<PackedRows> | AsyncIterable<PackedRows>): Promise<void> {
  const query = client.unsafe('COPY fuel_prices (town, valid_from, valid_to, super_petrol, diesel, kerosene) FROM STDIN') as unknown as CopyQuery
  const original = query.reject
  if (typeof original !== 'function') {
    throw new Error('postgres.js internals changed: a query has no reject callback (a refused COPY would hang)')
  }
  // A refused COPY rejects the already-settled query and never ends the stream: catch it here, or it hangs.
  let refused = false
  const failed = new Promise<never>((_resolve, reject) => {
    query.reject = (err: unknown) => { refused = true; reject(err); (original as (e: unknown) => void)(err) }
  })
  failed.catch(() => {})
  const stream = await query.writable()
  // Whatever destroys the stream also rejects `failed`; an unlistened 'error' would end the process.
  stream.on('error', () => {})
  const sink = copySink(stream)
  let aborted = false
  const write = async (): Promise<void> => {
    const source = Symbol.asyncIterator in batches ? batches[Symbol.asyncIterator]() : batches[Symbol.iterator]()
    for (;;) {
      let next
      try {
        next = await source.next()
      } catch (err) {
        aborted = true
        sink._destroy(err as Error, () => {}) // postgres.js sends CopyFail
        throw err
      }
      if (refused) return // `failed` carries the server's answer
      if (next.done === true) break
      const { text } = next.value
      const chunk = Buffer.from(text.buffer, text.byteOffset, text.byteLength) // the packed COPY text, not copied
      await settled((done) => { sink._write(chunk, 'buffer', done) })
      // The socket takes a batch at once, so without a turn of the event loop here a large file's
      // COPY would hold every other request back until its last batch.
      await new Promise((resolve) => setImmediate(resolve))
    }
    await settled((done) => { sink._final(done) }) // CopyDone; done once the server has answered
  }
  try {
    await Promise.race([write(), failed])
  } catch (err) {
    if (aborted) await failed.catch(() => {}) // the server's answer to CopyFail
    throw err
  }
}
