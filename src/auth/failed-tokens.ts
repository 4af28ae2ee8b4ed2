import type { FastifyBaseLogger } from 'fastify'
import { HttpError } from '../http-server/http-error.js'
import { MemorySlidingWindowStore } from '../rate-limit/memory-store.js'

export const TOO_MANY_FAILED_TOKENS = 'Too many wrong authorization tokens. Try again later.'

const WINDOW_MS = 60_000

interface FailedTokenBudgetOptions {
  perMinute: number
  log: FastifyBaseLogger
  windowMs?: number
  now?: () => number
}

/** All clients' wrong tokens share one allowance, whatever address each claims; past it a wrong token
 * answers 429 but the right one still passes, so guessing is bounded and the admin not locked out (D65). */
export class FailedTokenBudget {
  private readonly window: MemorySlidingWindowStore
  private readonly log: FastifyBaseLogger
  private readonly now: () => number
  /** When the last wrong token was refused; a burst is refusals less than a window apart. */
  private lastRefusal = Number.NEGATIVE_INFINITY

  constructor (options: FailedTokenBudgetOptions) {
    const windowMs = options.windowMs ?? WINDOW_MS
    this.now = options.now ?? Date.now
    this.window = new MemorySlidingWindowStore({ max: options.perMinute, windowMs, maxKeys: 1, now: this.now })
    this.log = options.log
  }

  refusal (unauthorized: () => HttpError): HttpError {
    const hit = this.window.hitSync('wrong-tokens')
    if (hit.allowed) return unauthorized()
    const now = this.now()
    // One line per burst, not per refusal: a flood of guesses must not flood the log too.
    if (now - this.lastRefusal >= this.window.windowMs) {
      this.log.warn({ perMinute: this.window.max }, `more than ${this.window.max} wrong bearer tokens in ${this.window.windowMs / 1000} s from all clients: further wrong tokens answer 429 until the count falls`)
    }
    this.lastRefusal = now
    return new HttpError(429, TOO_MANY_FAILED_TOKENS, { 'retry-after': String(Math.max(1, Math.ceil(hit.resetMs / 1000))) })
  }
}
