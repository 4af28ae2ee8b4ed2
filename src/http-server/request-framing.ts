import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../domain/errors.js'

/** D48 smaller refusals: no Host or a bad Expect, refused in the envelope; `100 Continue` only after the token. */
export const framingHook: onRequestHookHandler = (request, _reply, done) => {
  const { expect, host } = request.headers
  if (expect !== undefined && expect.toLowerCase() !== '100-continue') {
    done(new HttpError(417, 'Expectation Failed: only 100-continue is supported'))
  } else if (host === undefined && request.raw.httpVersion === '1.1') {
    done(new HttpError(400, 'An HTTP/1.1 request needs a Host header'))
  } else {
    done()
  }
}

export function continueIfExpected (request: FastifyRequest, reply: FastifyReply): void {
  if (request.headers.expect?.toLowerCase() === '100-continue' && !reply.raw.headersSent) reply.raw.writeContinue()
}

async function requestFraming (app: FastifyInstance): Promise<void> {
  const handOn = (req: IncomingMessage, res: ServerResponse): void => { app.server.emit('request', req, res) }
  app.server.on('checkExpectation', handOn)
  app.server.on('checkContinue', handOn)
  app.addHook('onRequest', framingHook)
}

export default fp(requestFraming, { name: 'request-framing' })
