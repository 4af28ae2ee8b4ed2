import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { LINGER_FACTOR, earlyAnswerHook } from './early-answer.js'

/** D29 early answers drain the request body. */
async function earlyAnswer (app: FastifyInstance, options: { maxUploadBytes: number }): Promise<void> {
  app.addHook('onSend', earlyAnswerHook({ maxBytes: LINGER_FACTOR * options.maxUploadBytes }))
}

export default fp(earlyAnswer, { name: 'early-answer' })
