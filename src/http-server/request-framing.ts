import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../domain/errors.js'

/**
 * D48: node:http answers a request without `Host` (HTTP/1.1) and an `Expect` other than
 * 100-continue itself, with empty bodies. Both are passed on to Fastify (`requireHostHeader:
 * false`, a `checkExpectation` listener that hands the request to Fastify's own), and refused
 * here in the envelope with the usual headers. `Expect: 100-continue` is handed on the same way,
 * without node's automatic `100 Continue`: the upload route invites the body only once its token
 * is accepted (`continueIfExpected`), so a wrong token gets its 401 and no invitation.
 */
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

/** Sends `100 Continue` to a client waiting for it before sending its body. */
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
