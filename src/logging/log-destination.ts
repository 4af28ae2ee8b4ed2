import { closeSync, openSync, writeSync } from 'node:fs'
import { isatty } from 'node:tty'
import { pino, type DestinationStream } from 'pino'
import { prettyFactory, type PrettyOptions } from 'pino-pretty'

/** Write errors that mean the reader has gone for good: a closed pipe, a terminal that hung up. */
const GONE = new Set(['EPIPE', 'EIO', 'EBADF'])

const NOTHING = Buffer.alloc(0)

export interface OutputDestination extends DestinationStream {
  /** True once a write found the destination gone; every later line is dropped. */
  readonly gone: boolean
}

/**
 * pino's own asynchronous destination on `fd`, except that a reader that has gone (EPIPE, and a
 * terminal that answers EIO) is dropped rather than fatal or retried (D60): pino ends the
 * process on EIO, and sonic-boom's exit flush retries any error but EAGAIN every 100 ms forever.
 */
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
  const format = prettyFactory(options)
  const out = outputDestination(fd)
  return {
    write: (line: string) => out.write(format(line)),
    get gone () { return out.gone }
  }
}

/** Which of stdin, stdout and stderr were a terminal when the process started. */
const startedAtTerminal = [0, 1, 2].filter((fd) => isatty(fd))

/**
 * Points stdin, stdout and stderr at /dev/null where they were a terminal that has since hung up.
 * Call it as the process exits: Node 20 restores a terminal's settings at exit and aborts when the
 * terminal answers EIO, and that abort never ends; Node skips a descriptor that is now
 * another file. Reopened at once, so no descriptor another thread opens meanwhile takes the number
 * (libuv aborts when it later closes a descriptor of 0, 1 or 2).
 */
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
