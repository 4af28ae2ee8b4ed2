import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { HttpError } from '../http-server/http-error.js'
import type { FailedTokenBudget } from './failed-tokens.js'

interface BearerAuthOptions {
  /** The expected token; undefined leaves the route open (spec 5 rule 4, for ingest). */
  token: string | undefined
  detail: string
  headers?: Record<string, string>
  failures: FailedTokenBudget
}

const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest()

/** The token is checked first, before the body is read (D13); SHA-256 digests keep it constant-time. */
export function bearerAuth (options: BearerAuthOptions): (request: FastifyRequest) => Promise<void> {
  const expected = options.token === undefined ? undefined : sha256(options.token)
  const headers = { 'www-authenticate': 'Bearer', ...options.headers }
  const unauthorized = (): HttpError => new HttpError(401, options.detail, headers)
  return async (request) => {
    if (expected === undefined) return
    const match = /^bearer[ \t]+(.*)$/i.exec(request.headers.authorization ?? '')
    if (match === null || !timingSafeEqual(sha256(match[1]?.trim() ?? ''), expected)) {
      throw options.failures.refusal(unauthorized)
    }
  }
}
