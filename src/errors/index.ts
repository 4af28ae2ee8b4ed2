import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { IngestRejected } from '../domain/errors.js'
import { HttpError } from '../http-server/http-error.js'
import { noStoreAnswer } from '../http-caching/index.js'
import { recordFailure } from '../logging/access-log.js'
import { storageFull } from '../db/storage-full.js'
import { toValidationItems } from './validation.js'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const

export const STORAGE_FULL_DETAIL = 'Insufficient storage: the database disk is full, nothing was written'

interface ErrorsOptions {
  /** PGlite's data directory, whose free space tells a full disk from other PANICs; none on PostgreSQL. */
  dataDir?: string | undefined
}

/** One error envelope, `{"detail": …}`, framework errors included; a 5xx never carries a stack or SQL (D19). */
async function errors (app: FastifyInstance, options: ErrorsOptions): Promise<void> {
  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    if (error instanceof HttpError) {
      if (error.statusCode >= 500) recordFailure(request, error.cause ?? error)
      // An upload's refusal also says where and how to fix it, beside the same `detail`.
      void reply.headers(error.headers).code(error.statusCode).send(error instanceof IngestRejected ? error.body() : { detail: error.detail })
      return
    }
    if (error.validation !== undefined) {
      void reply.code(422).send({ detail: toValidationItems(error.validation, error.validationContext ?? 'querystring') })
      return
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) {
      void reply.code(status).send({ detail: error.message !== '' ? error.message : STATUS_CODES[status] })
      return
    }
    recordFailure(request, error) // logged once, by the access line
    // A write stopped by a full disk says so; a read stays a retryable 500.
    if (request.method !== 'GET' && request.method !== 'HEAD' && storageFull(error, options.dataDir)) {
      void reply.code(507).send({ detail: STORAGE_FULL_DETAIL })
      return
    }
    void reply.code(500).send({ detail: 'Internal Server Error' })
  })

  // Unmatched answers get the routes' onRoute hooks in a scope of their own, so no global onSend hook slows every request.
  await app.register(async (unmatched) => {
    unmatched.addHook('onSend', noStoreAnswer)
    unmatched.addHook('onSend', app.metrics.unmatchedHook)
    // Spec 8: unknown paths are limited too; only declared routes get the limiter's hook by itself.
    unmatched.setNotFoundHandler({ preHandler: app.rateLimit() }, notFound)
  })
}

/** A known path with another method is 405 with Allow, not 404. */
function notFound (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply): void {
  const url = request.url.split('?')[0] as string
  const allowed = METHODS.filter((method) => this.hasRoute({ url, method }))
  if (allowed.length > 0) {
    void reply.code(405).header('allow', allowed.join(', ')).send({ detail: 'Method Not Allowed' })
    return
  }
  void reply.code(404).send({ detail: 'Not Found' })
}

export default fp(errors, { name: 'errors', dependencies: ['rate-limit', 'http-caching', 'metrics'] })
