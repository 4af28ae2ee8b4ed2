import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

export const SLOW_REQUEST_MS = 1000

interface LevelCheck { isLevelEnabled: (level: string) => boolean }

const failures = new WeakMap<FastifyRequest, unknown>()

/** The cause of a 5xx the error handler answered, for the request's one access line. */
export function recordFailure (request: FastifyRequest, cause: unknown): void {
  failures.set(request, cause)
}

/** One access line per request: error for a 5xx (with its cause), warn when slow, else debug (D45). */
export function logAccess (request: FastifyRequest, reply: FastifyReply, responseTime: number, error?: Error): void {
  const level = error !== undefined || reply.statusCode >= 500 ? 'error' : responseTime >= SLOW_REQUEST_MS ? 'warn' : 'debug'
  // The usual case at the default level: nothing to write, so nothing built.
  if (level === 'debug' && (request.log as Partial<LevelCheck>).isLevelEnabled?.('debug') === false) return
  const err = error ?? (level === 'error' ? failures.get(request) : undefined)
  request.log[level]({ req: request, res: reply, responseTime, err }, 'request completed')
}

/** Fastify's own per-request lines off: the access line above replaces both. */
export class AccessLog extends LogController {
  override incomingRequest (): void {}
  override requestCompleted (): void {}
}
