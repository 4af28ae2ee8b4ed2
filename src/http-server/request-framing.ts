import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from './http-error.js'

/** No Host, two Hosts or an Expect other than 100-continue, refused in the envelope; `100 Continue` only after the token. */
export function framingError (request: FastifyRequest): HttpError | undefined {
  const { expect, host } = request.headers
  if (expect !== undefined && expect.toLowerCase() !== '100-continue') return new HttpError(417, 'Expectation Failed: only 100-continue is supported')
  if (host === undefined && request.raw.httpVersion === '1.1') return new HttpError(400, 'An HTTP/1.1 request needs a Host header')
  // RFC 9112 3.2: node:http keeps the first of two Host lines, so only the raw lines show the second (D66).
  if (host !== undefined && hostLines(request.raw.rawHeaders) > 1) return new HttpError(400, 'A request may carry only one Host header')
  return undefined
}

function hostLines (rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    if (name.length === 4 && name.toLowerCase() === 'host') count++
  }
  return count
}

export function continueIfExpected (request: FastifyRequest, reply: FastifyReply): void {
  if (request.headers.expect?.toLowerCase() === '100-continue' && !reply.raw.headersSent) reply.raw.writeContinue()
}
