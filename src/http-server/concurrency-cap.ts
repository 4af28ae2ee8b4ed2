import { HttpError } from './http-error.js'

/** At most `max` requests of one kind at once in this process; one more is refused 503 with Retry-After. */
export class ConcurrencyCap {
  private active = 0

  constructor (private readonly max: number, private readonly busyDetail: string, private readonly retryAfterSeconds: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('a concurrency cap must be a positive integer')
  }

  /** A place, or the 503; the function returned frees the place, once however often it is called. */
  enter (): () => void {
    if (this.active >= this.max) throw new HttpError(503, this.busyDetail, { 'retry-after': String(this.retryAfterSeconds) })
    this.active++
    let held = true
    return () => {
      if (held) this.active--
      held = false
    }
  }
}
