import type { ServerOptions } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { announcesBody } from './early-answer.js'

/** Connection timeouts: a slow or idle client cannot hold a connection forever (D32). */
interface ConnectionTimeouts {
  headersTimeoutMs: number
  requestTimeoutMs: number
  keepAliveTimeoutMs: number
  bodyIdleTimeoutMs: number
}

// node:http checks the headers and request timeouts this often, so they fire up to this late.
const CONNECTIONS_CHECK_INTERVAL_MS = 1000

export function timeoutServerOptions (timeouts: ConnectionTimeouts): { requestTimeout: number, keepAliveTimeout: number, http: ServerOptions } {
  return {
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    http: {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs, // Fastify sets it too; node:http checks the pair here
      requireHostHeader: false, // refused on Fastify's path instead, in the envelope
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS
    }
  }
}

/** The body idle timeout, lifted once the body is read so a long ingest is never cut off. */
export function armBodyIdleTimeout (request: FastifyRequest, reply: FastifyReply, idleMs: number): void {
  const raw = request.raw
  const socket = raw.socket as Partial<typeof raw.socket> // a stand-in without timers under inject
  if (raw.complete || !announcesBody(raw.headers) || typeof socket.setTimeout !== 'function') return
  const setSocketTimeout = socket.setTimeout.bind(socket)
  setSocketTimeout(idleMs)
  raw.once('end', () => {
    // Once answered, node:http's keep-alive timeout is in place: leave it.
    if (!reply.raw.writableEnded) setSocketTimeout(0)
  })
}
