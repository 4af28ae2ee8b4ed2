import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from '../domain/errors.js'

/** D48 smaller refusals: no Host or a bad Expect, refused in the envelope; `100 Continue` only after the token. */
export function framingError (request: FastifyRequest): HttpError | undefined {
  const { expect, host } = request.headers
  if (expect !== undefined && expect.toLowerCase() !== '100-continue') return new HttpError(417, 'Expectation Failed: only 100-continue is supported')
  if (host === undefined && request.raw.httpVersion === '1.1') return new HttpError(400, 'An HTTP/1.1 request needs a Host header')
  return undefined
}

export function continueIfExpected (request: FastifyRequest, reply: FastifyReply): void {
  if (request.headers.expect?.toLowerCase() === '100-continue' && !reply.raw.headersSent) reply.raw.writeContinue()
}
