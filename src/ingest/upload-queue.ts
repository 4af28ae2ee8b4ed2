import type { FastifyReply } from 'fastify'
import { HttpError } from '../http-server/http-error.js'

export const UPLOADS_BUSY = 'Too many uploads are being processed. Try again later.'

/** Seconds a refused upload is asked to wait: the dry run or ingest of a large file takes a few. */
export const UPLOADS_BUSY_RETRY_AFTER_SECONDS = 5

/**
 * Uploads (dry runs and ingests together) are bounded per process (D57): at most `size` are read
 * and processed at once, so their files and rows bound the memory they hold and they share the
 * event loop with reads in slices. One more is refused 503 with Retry-After before its body is
 * read. Ingests past the first still queue behind the ingest lock (D14) inside this bound.
 */
export class UploadQueue {
  private active = 0

  constructor (readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('the upload queue size must be a positive integer')
  }

  /** Uploads holding a place now. */
  get running (): number {
    return this.active
  }

  /**
   * Takes a place for this request, or throws the 503. The place is given back when both the
   * work is done (`finish` from the handler) and the answer is closed (sent or cut off), so a
   * client that hangs up does not free a place its upload still uses.
   */
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

  /** The handler starts on the upload; `finish` must follow. */
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
