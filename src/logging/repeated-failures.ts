import type { LogFn, Logger } from 'pino'
import { errorFields, type ErrorFields } from './error-fields.js'

/** How long repeats of one failure are counted before their count is written. */
const REPEAT_WINDOW_MS = 10_000
/** Distinct failures counted at once; beyond this, lines are written as they come. */
const MAX_OPEN = 1000
const WARN = 40

interface Open {
  repeats: number
  timer: NodeJS.Timeout
  method: LogFn
  level: number
  msg: string
  err: ErrorFields
  status: number | undefined
}

/** The same failure again within the window is only counted, and one line gives the count,
 * so an outage writes one line per failure per window. */
export class RepeatedFailures {
  private readonly open = new Map<string, Open>()
  /** Where the counts are written: the service's root logger, not the first request's child. */
  root: Logger | undefined

  constructor (private readonly windowMs = REPEAT_WINDOW_MS) {}

  /** pino's `hooks.logMethod`. */
  readonly logMethod = (logger: Logger, args: Parameters<LogFn>, method: LogFn, level: number): void => {
    const first = args[0] as unknown
    const err = level < WARN ? undefined : first instanceof Error ? first : (first as { err?: unknown } | null)?.err
    if (err === undefined) { method.apply(logger, args); return }
    const fields = errorFields(err)
    const msg = typeof args[1] === 'string' ? args[1] : first instanceof Error ? first.message : ''
    const status = (first as { res?: { statusCode?: number } }).res?.statusCode
    const key = `${level}\u0000${msg}\u0000${status ?? ''}\u0000${fields.type}\u0000${fields.code ?? ''}\u0000${fields.message}`
    const seen = this.open.get(key)
    if (seen !== undefined) { seen.repeats++; return }
    if (this.open.size < MAX_OPEN) this.open.set(key, { repeats: 0, timer: this.closeLater(key), method, level, msg, err: fields, status })
    method.apply(logger, args)
  }

  flush (): void {
    for (const key of [...this.open.keys()]) this.close(key, false)
  }

  private closeLater (key: string): NodeJS.Timeout {
    return setTimeout(() => this.close(key, true), this.windowMs).unref()
  }

  private close (key: string, reopen: boolean): void {
    const open = this.open.get(key)
    if (open === undefined) return
    clearTimeout(open.timer)
    if (open.repeats === 0) { this.open.delete(key); return }
    const { repeats, err, status } = open
    if (this.root !== undefined) {
      const fields = status === undefined ? { err, repeats } : { err, res: { statusCode: status }, repeats }
      open.method.call(this.root, fields, `${open.msg} (repeated ${repeats} times within ${this.windowMs / 1000} s)`)
    }
    // A failure that goes on keeps being counted, one line a window, until a window passes without it.
    open.repeats = 0
    if (reopen) open.timer = this.closeLater(key)
    else this.open.delete(key)
  }
}
