import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { HttpError } from '../domain/errors.js'

interface BearerAuthOptions {
  /** The expected token; undefined leaves the route open (spec 5 rule 4, for ingest). */
  token: string | undefined
  /** The exact `detail` of the 401. */
  detail: string
  /** Headers added to the 401 (ingest closes the connection rather than read an unread body). */
  headers?: Record<string, string>
}

const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest()

/**
 * A check wanting `Authorization: Bearer <token>`, for an onRequest or preParsing hook: before
 * any byte of the body is read (D13). Comparing SHA-256 digests keeps the comparison constant-time whatever the
 * lengths. A missing header, another scheme or a wrong token is a 401 with `WWW-Authenticate`.
 */
export function bearerAuth (options: BearerAuthOptions): (request: FastifyRequest) => Promise<void> {
  const expected = options.token === undefined ? undefined : sha256(options.token)
  const headers = { 'www-authenticate': 'Bearer', ...options.headers }
  return async (request) => {
    if (expected === undefined) return
    const match = /^bearer[ \t]+(.*)$/i.exec(request.headers.authorization ?? '')
    if (match === null || !timingSafeEqual(sha256(match[1]?.trim() ?? ''), expected)) {
      throw new HttpError(401, options.detail, headers)
    }
  }
}
