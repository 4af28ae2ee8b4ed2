import type { ServerOptions } from 'node:http'
import type { onRequestHookHandler } from 'fastify'
import { announcesBody } from './early-answer.js'

/**
 * D32: how long a connection may take, so slow or hostile clients (slowloris: a header byte
 * every few seconds; a body that trickles or stalls) hold a socket for a bounded time only.
 *
 * - `headersTimeoutMs` (HEADERS_TIMEOUT_MS, 10 s): the request line and headers must arrive
 *   within this; then 408 and the connection closes.
 * - `requestTimeoutMs` (REQUEST_TIMEOUT_MS, 120 s): the whole request, body included; enough for
 *   a full 10 MiB upload at 0.7 Mbit/s. Then 408 and close.
 * - `bodyIdleTimeoutMs` (BODY_IDLE_TIMEOUT_MS, 10 s): while a body is being received, the longest
 *   silence allowed; then the connection is closed (the client is not sending, so an answer
 *   would not be read).
 * - `keepAliveTimeoutMs` (KEEP_ALIVE_TIMEOUT_MS, 72 s): how long an idle connection is kept
 *   between requests; longer than the 60 s idle timeout of common load balancers, so a balancer
 *   never sends a request on a connection the service is closing (Fastify's default, kept).
 *
 * Node checks the first two every CONNECTIONS_CHECK_INTERVAL_MS, so they fire up to that late.
 */
export interface ConnectionTimeouts {
  headersTimeoutMs: number
  requestTimeoutMs: number
  keepAliveTimeoutMs: number
  bodyIdleTimeoutMs: number
}

export const CONNECTIONS_CHECK_INTERVAL_MS = 1000

/** Fastify's server options for D32 (`http` is passed on to node:http's createServer). */
export function timeoutServerOptions (timeouts: ConnectionTimeouts): { requestTimeout: number, keepAliveTimeout: number, http: ServerOptions } {
  return {
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    http: {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs, // Fastify sets it too; node:http checks the pair here
      requireHostHeader: false, // D48: refused by Fastify's path instead, in the envelope
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS
    }
  }
}

/**
 * D32's body-read timeout: while the request body is arriving, the socket may be silent for at
 * most `idleMs` (node:http then closes it). Once the body has been read the limit is lifted, so a
 * long ingest is never cut off while the server works; after the answer node:http applies the
 * keep-alive timeout as usual.
 */
export function bodyIdleTimeoutHook (idleMs: number): onRequestHookHandler {
  return (request, reply, done) => {
    const raw = request.raw
    const socket = raw.socket as Partial<typeof raw.socket> // a stand-in without timers under inject
    if (!raw.complete && announcesBody(raw.headers) && typeof socket.setTimeout === 'function') {
      const setSocketTimeout = socket.setTimeout.bind(socket)
      setSocketTimeout(idleMs)
      raw.once('end', () => {
        // The app sets no other socket timeout (Fastify's connectionTimeout is 0); after the
        // answer node:http has already put its keep-alive timeout in place: leave that one.
        if (!reply.raw.writableEnded) setSocketTimeout(0)
      })
    }
    done()
  }
}
