import type { FastifyReply } from 'fastify'
import { HttpError } from '../http-server/http-error.js'

export const UPLOADS_BUSY = 'Too many uploads are being processed. Try again later.'

/** Seconds a refused upload is asked to wait: the dry run or ingest of a large file takes a few. */
export const UPLOADS_BUSY_RETRY_AFTER_SECONDS = 5

/** At most `size` uploads per process at once, so their memory is bounded; one more gets 503 before its body is read (D57). */
export class UploadQueue {
  private active = 0

  constructor (readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('the upload queue size must be a positive integer')
  }

  get running (): number {
    return this.active
  }

  /** Freed only when the work is done and the answer closed, so a client hanging up frees no place still in use. */
  enter (reply: FastifyReply): UploadPlace {
    if (this.active >= this.size) {
      throw new HttpError(503, UPLOADS_BUSY, { 'retry-after': String(UPLOADS_BUSY_RETRY_AFTER_SECONDS) })
    }
    this.active++
    const place = new UploadPlace(() => { this.active-- })
    reply.raw.once('close', () => { place.closed() })
    return place
  }
}

export class UploadPlace {
  private working = false
  private answered = false
  private released = false

  constructor (private readonly release: () => void) {}

  start (): void {
    this.working = true
  }

  finish (): void {
    this.working = false
    if (this.answered) this.free()
  }

  closed (): void {
    this.answered = true
    if (!this.working) this.free()
  }

  private free (): void {
    if (this.released) return
    this.released = true
    this.release()
  }
}
