import { closeSync, openSync, writeSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isatty } from 'node:tty'
import { pino, type DestinationStream } from 'pino'
import type { PrettyOptions } from 'pino-pretty'

/** Write errors that mean the reader has gone for good: a closed pipe, a terminal that hung up. */
const GONE = new Set(['EPIPE', 'EIO', 'EBADF'])

const NOTHING = Buffer.alloc(0)

export interface OutputDestination extends DestinationStream {
  readonly gone: boolean
}

/** pino's destination on `fd`, but a reader that has gone is dropped (D60): pino ends the process on EIO,
 * and sonic-boom's exit flush retries any error but EAGAIN every 100 ms forever. */
export function outputDestination (fd = 1): OutputDestination {
  const boom = pino.destination({ fd, minLength: 0, sync: false })
  let gone = false
  const drop = (): void => {
    gone = true
    boom.write = () => true
    boom.flush = (cb?: (err?: Error) => void) => { cb?.() }
    boom.flushSync = () => {}
    boom.end = () => {}
  }
  boom.on('error', (err: NodeJS.ErrnoException) => {
    if (GONE.has(err.code ?? '')) drop()
    else throw err // as pino itself does: a disk that refuses the log is not silently ignored
  })
  const flushSync = boom.flushSync.bind(boom)
  // pino flushes at exit; an empty write first finds a hung-up terminal without entering that loop.
  boom.flushSync = () => {
    if (gone) return
    try {
      writeSync(fd, NOTHING)
    } catch (err) {
      if (GONE.has((err as NodeJS.ErrnoException).code ?? '')) { drop(); return }
      throw err
    }
    flushSync()
  }
  return Object.defineProperty(boom, 'gone', { get: () => gone }) as unknown as OutputDestination
}

/** pino-pretty's lines, formatted in this thread onto `outputDestination`: no worker thread to outlive a terminal. */
export function prettyDestination (options: PrettyOptions, fd = 1): OutputDestination {
  // Loaded here, for a person at a terminal only: a service writing JSON lines never needs its 30 modules.
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty')
  const format = prettyFactory(options)
  const out = outputDestination(fd)
  return {
    write: (line: string) => out.write(format(line)),
    get gone () { return out.gone }
  }
}

const startedAtTerminal = [0, 1, 2].filter((fd) => isatty(fd))

/** At exit, points a hung-up terminal's stdio at /dev/null: Node 20 restoring a terminal that answers EIO aborts forever.
 * Reopened at once, so no other thread's descriptor takes the number (libuv aborts closing a descriptor 0–2). */
export function releaseLostTerminal (): void {
  for (const fd of startedAtTerminal) {
    if (isatty(fd)) continue // still a working terminal: Node restores its settings
    try {
      closeSync(fd)
    } catch {
      continue // already closed: nothing for Node to restore
    }
    const reopened = openSync('/dev/null', 'r+')
    if (reopened !== fd) closeSync(reopened) // another thread took the number first
  }
}
