import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { LINGER_FACTOR, drainEarlyAnswer } from './early-answer.js'
import { framingError } from './request-framing.js'
import { armBodyIdleTimeout } from './timeouts.js'

interface HttpServerOptions {
  bodyIdleMs: number
  maxUploadBytes: number
}

async function httpServer (app: FastifyInstance, options: HttpServerOptions): Promise<void> {
  // `Expect` is judged on Fastify's path (framingError), so a refusal is in the envelope.
  const handOn = (req: IncomingMessage, res: ServerResponse): void => { app.server.emit('request', req, res) }
  app.server.on('checkExpectation', handOn)
  app.server.on('checkContinue', handOn)

  app.addHook('onRequest', (request, reply, done) => {
    armBodyIdleTimeout(request, reply, options.bodyIdleMs)
    done(framingError(request))
  })

  const drainMaxBytes = LINGER_FACTOR * options.maxUploadBytes
  // Shutdown: an answer in flight closes its keep-alive connection so close() need not wait.
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close')
    drainEarlyAnswer(request, reply, drainMaxBytes)
    done(null, payload)
  })
}

export default fp(httpServer, { name: 'http-server' })
