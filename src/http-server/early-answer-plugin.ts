import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { LINGER_FACTOR, earlyAnswerHook } from './early-answer.js'

/**
 * D29: an answer sent before its request's body was read (a 401, 404, 413, 429…) drains that
 * body, within bounds, instead of closing under a client that is still sending.
 */
async function earlyAnswer (app: FastifyInstance, options: { maxUploadBytes: number }): Promise<void> {
  app.addHook('onSend', earlyAnswerHook({ maxBytes: LINGER_FACTOR * options.maxUploadBytes }))
}

export default fp(earlyAnswer, { name: 'early-answer' })
