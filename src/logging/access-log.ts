import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

/** An answer slower than this is logged at warn whatever its status. */
export const SLOW_REQUEST_MS = 1000

/**
 * D45 logging: one access line per request, written by Fastify's own LogController when the
 * answer is finished (no hook of ours), in place of its two lines at info: at error for a 5xx or
 * a failed response, at warn for a slow answer, otherwise at debug. So the default `info` writes
 * what a balancer's access log cannot tell (failures, slowness) and nothing per ordinary
 * request, and `LOG_LEVEL=debug` is a full access log.
 */
export class AccessLog extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const responseTime = reply.elapsedTime
    const level = error != null || reply.statusCode >= 500 ? 'error' : responseTime >= SLOW_REQUEST_MS ? 'warn' : 'debug'
    request.log[level]({ req: request, res: reply, responseTime, err: error ?? undefined }, 'request completed')
  }
}
