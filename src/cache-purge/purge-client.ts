import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { FastifyBaseLogger } from 'fastify'
import { redactUrl } from '../config.js'
import { settlesWithin } from '../settles-within.js'

export interface PurgeClientOptions {
  url: string
  token?: string | undefined
  /** The longest a write's answer waits for the first attempt; later ones run in the background. */
  waitMs?: number
  /** One attempt's bound, connection and answer included. */
  attemptTimeoutMs?: number
  /** Pauses before each retry; their count is the number of retries. */
  retryDelaysMs?: readonly number[]
  log: FastifyBaseLogger
  onOutcome?: (outcome: PurgeOutcome) => void
}

type PurgeOutcome = 'delivered' | 'refused' | 'given_up' | 'abandoned'

/** Tags per request: keeps the header well under a cache's 8 KiB line limit (Varnish's default). */
export const MAX_TAGS_PER_PURGE = 100

const DEFAULT_WAIT_MS = 1000
const DEFAULT_ATTEMPT_TIMEOUT_MS = 5000
const DEFAULT_RETRY_DELAYS_MS = [1000, 5000, 25_000]

interface Failure { reason: string, retry: boolean }

interface Job {
  tags: string
  request: ClientRequest | undefined
  wake: (() => void) | undefined
  closed: boolean
}

/** A cache that is down or slow never fails the write that asked: it waits at most `waitMs`, retries run in the
 * background, and each purge logs at most a warning at its first failure and one line if it ends undelivered (D70). */
export class PurgeClient {
  private readonly url: URL
  private readonly token: string | undefined
  private readonly waitMs: number
  private readonly attemptTimeoutMs: number
  private readonly retryDelaysMs: readonly number[]
  private readonly log: FastifyBaseLogger
  private readonly onOutcome: (outcome: PurgeOutcome) => void
  private readonly jobs = new Set<Job>()

  constructor (options: PurgeClientOptions) {
    this.url = new URL(options.url)
    this.token = options.token
    this.waitMs = options.waitMs ?? DEFAULT_WAIT_MS
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS
    this.log = options.log
    this.onOutcome = options.onOutcome ?? (() => {})
  }

  /** Resolves once the cache confirmed, refused or failed the first attempt, or after `waitMs`; never rejects. */
  async purge (tags: readonly string[]): Promise<void> {
    const firsts: Array<Promise<void>> = []
    for (let i = 0; i < tags.length; i += MAX_TAGS_PER_PURGE) {
      firsts.push(new Promise((resolve) => { void this.deliver(tags.slice(i, i + MAX_TAGS_PER_PURGE).join(' '), resolve) }))
    }
    await settlesWithin(Promise.all(firsts), this.waitMs)
  }

  /** Pending retries stop; each purge not delivered is logged with its tags, for a purge by hand. */
  close (): void {
    for (const job of this.jobs) {
      job.closed = true
      job.request?.destroy(new Error('the service is shutting down'))
      job.wake?.()
    }
  }

  private async deliver (tags: string, firstDone: () => void): Promise<void> {
    const job: Job = { tags, request: undefined, wake: undefined, closed: false }
    this.jobs.add(job)
    const target = String(redactUrl(this.url.toString()))
    let firstFailure: string | undefined
    try {
      for (let attempt = 1; ; attempt++) {
        const failure = await this.attempt(job)
        firstDone()
        if (failure === undefined) {
          this.onOutcome('delivered')
          if (firstFailure !== undefined) this.log.info({ tags, target, attempt }, 'cache purge delivered after a retry')
          return
        }
        const end = job.closed
          ? 'abandoned'
          : !failure.retry ? 'refused' : attempt > this.retryDelaysMs.length ? 'given_up' : undefined
        if (end !== undefined) {
          this.onOutcome(end)
          this.log.error({ tags, target, attempt, reason: failure.reason, firstFailure },
            `cache purge ${end === 'abandoned' ? 'abandoned at shutdown' : end === 'refused' ? 'refused' : 'given up'}: the shared cache may serve these tags' old answers until they expire; purge them by hand`)
          return
        }
        if (firstFailure === undefined) {
          firstFailure = failure.reason
          this.log.warn({ tags, target, reason: failure.reason, retries: this.retryDelaysMs.length }, 'cache purge failed; retrying in the background')
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.retryDelaysMs[attempt - 1])
          job.wake = () => { clearTimeout(timer); resolve() }
        })
        job.wake = undefined
      }
    } finally {
      this.jobs.delete(job)
    }
  }

  /** One PURGE; undefined when the cache answered 2xx. */
  private async attempt (job: Job): Promise<Failure | undefined> {
    if (job.closed) return { reason: 'the service is shutting down', retry: false }
    const headers: Record<string, string> = { 'surrogate-key': job.tags, 'content-length': '0' }
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`
    const options: RequestOptions = { method: 'PURGE', headers, agent: false }
    return await new Promise((resolve) => {
      const request = (this.url.protocol === 'https:' ? httpsRequest : httpRequest)(this.url, options, (res: IncomingMessage) => {
        res.resume()
        res.once('end', () => {
          const status = res.statusCode ?? 0
          resolve(status >= 200 && status < 300 ? undefined : { reason: `HTTP ${status}`, retry: status >= 500 || status === 408 || status === 429 })
        })
        res.once('error', (err) => resolve({ reason: err.message, retry: true }))
        res.once('close', () => resolve({ reason: 'the connection closed mid-answer', retry: true }))
      })
      job.request = request
      // The whole attempt, not only idle time: a cache that trickles its answer is as slow as a silent one.
      const timer = setTimeout(() => request.destroy(new Error(`no answer within ${this.attemptTimeoutMs} ms`)), this.attemptTimeoutMs)
      request.once('error', (err: NodeJS.ErrnoException) => resolve({ reason: err.code ?? err.message, retry: true }))
      request.once('close', () => { clearTimeout(timer); job.request = undefined })
      request.end()
    })
  }
}
