import type { FastifyReply } from 'fastify'
import { ConcurrencyCap } from '../http-server/concurrency-cap.js'

export const UPLOADS_BUSY = 'Too many uploads are being processed. Try again later.'

/** Seconds a refused upload is asked to wait: the dry run or ingest of a large file takes a few. */
const UPLOADS_BUSY_RETRY_AFTER_SECONDS = 5

/** At most `size` uploads per process at once, so their memory is bounded; one more gets 503 before its body is read (D57). */
export class UploadQueue {
  private readonly cap: ConcurrencyCap

  constructor (size: number) {
    this.cap = new ConcurrencyCap(size, UPLOADS_BUSY, UPLOADS_BUSY_RETRY_AFTER_SECONDS)
  }

  /** Freed only when the work is done and the answer closed, so a client hanging up frees no place still in use. */
  enter (reply: FastifyReply): UploadPlace {
    const place = new UploadPlace(this.cap.enter())
    reply.raw.once('close', () => { place.closed() })
    return place
  }
}

export class UploadPlace {
  private working = false
  private answered = false

  constructor (private readonly free: () => void) {}

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
}
