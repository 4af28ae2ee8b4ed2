import type { FastifyReply } from 'fastify'
import { ConcurrencyCap } from '../http-server/concurrency-cap.js'

export const EXPORTS_BUSY = 'Too many CSV exports are running. Try again later.'

/** Seconds a client refused by the cap is asked to wait; an export usually takes a few. */
const EXPORTS_BUSY_RETRY_AFTER_SECONDS = 5

export interface ExportLimits {
  /** Exports streaming at once in this process (EXPORT_MAX_CONCURRENT). */
  maxConcurrent: number
  /** An export is cut off when its client has taken nothing for this long (EXPORT_IDLE_TIMEOUT_MS). */
  idleMs: number
}

/** At most `maxConcurrent` exports per process (then 503), and one whose client stops reading is dropped (D63). */
export class ExportGate {
  private readonly cap: ConcurrencyCap

  constructor (private readonly limits: ExportLimits) {
    this.cap = new ConcurrencyCap(limits.maxConcurrent, EXPORTS_BUSY, EXPORTS_BUSY_RETRY_AFTER_SECONDS)
  }

  /** A socket timeout, so a slow reader that keeps reading is never cut off; node:http resets it after the answer. */
  enter (reply: FastifyReply): void {
    reply.raw.once('close', this.cap.enter())
    const socket = reply.raw.socket as Partial<NonNullable<typeof reply.raw.socket>> | null // none under inject
    if (typeof socket?.setTimeout === 'function') socket.setTimeout(this.limits.idleMs)
  }
}
