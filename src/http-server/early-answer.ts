import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type { onSendHookHandler } from 'fastify'

/**
 * D29: answers sent before the request body was read (a 401 from the token check, a 429, a 404,
 * a 413 judged on Content-Length) must reach the client. Closing the connection while the client
 * is still sending makes the server's TCP stack answer the unread bytes with a reset, and the
 * client then loses the answer it was about to read (Node's fetch reports EPIPE). So such an
 * answer keeps the connection and the rest of the body is read and thrown away, within bounds:
 *
 * - a body declared larger than `maxBytes` is not drained: the answer says `Connection: close`
 *   and the connection closes at once;
 * - more than `maxBytes` actually received after the answer, no byte for `idleMs`, or a body
 *   still unfinished after `lingerMs`: the connection is closed there.
 *
 * A body drained to its end leaves an ordinary keep-alive connection, ready for the next request.
 */
export interface DrainLimits {
  /** Most bytes discarded after the answer (D48: LINGER_FACTOR × MAX_UPLOAD_BYTES). */
  maxBytes: number
  /** Closed when the body stalls this long (a client that withholds its body). */
  idleMs?: number
  /** Closed when the body has not ended this long after the answer, however it trickles. */
  lingerMs?: number
}

/**
 * D48 lingering close: an upload over the limit (a 413), or one refused by its token (401) or
 * type (415), is read and thrown away up to this many times MAX_UPLOAD_BYTES, because browsers,
 * Node and Python clients keep sending and lose the answer to a reset otherwise.
 */
export const LINGER_FACTOR = 5

export const DRAIN_IDLE_MS = 2_000
export const DRAIN_LINGER_MS = 30_000

/** Does the request announce a body (RFC 9112 6.3: Content-Length or Transfer-Encoding)? */
export function announcesBody (headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length']
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/**
 * Starts discarding what is left of `request`'s body, within `limits`; returns the headers the
 * answer needs (`Connection: close` when the declared body is too large to drain). Call it when
 * answering a request whose body nobody will read.
 */
export function discardUnreadBody (request: IncomingMessage, limits: DrainLimits): Record<string, string> {
  // `complete`: the parser has seen the whole body; Node discards what is buffered by itself.
  if (request.complete || !announcesBody(request.headers)) return {}
  if (Number(request.headers['content-length']) > limits.maxBytes) return { connection: 'close' }
  let seen = 0
  const stop = (): void => {
    clearTimeout(idle)
    clearTimeout(linger)
    request.removeListener('data', onData)
    request.removeListener('end', stop)
    request.removeListener('close', stop)
  }
  const giveUp = (): void => {
    stop()
    request.destroy() // an unfinished request takes its socket with it
  }
  const onData = (chunk: Buffer): void => {
    seen += chunk.length
    if (seen > limits.maxBytes) giveUp()
    else idle.refresh()
  }
  // unref: a server that is shutting down does not wait for a client's leftovers.
  const idle = setTimeout(giveUp, limits.idleMs ?? DRAIN_IDLE_MS).unref()
  const linger = setTimeout(giveUp, limits.lingerMs ?? DRAIN_LINGER_MS).unref()
  request.on('data', onData)
  request.once('end', stop)
  request.once('close', stop)
  request.resume() // even if a reader paused it before giving up
  return {}
}

/**
 * The same as an onSend hook for the whole app: any answer sent while its request's body is still
 * arriving drains it (D29). Answers that already say `Connection: close` (a body over the upload
 * limit, shutdown) are left to close at once. Cheap for the usual request: no body, or complete.
 */
export function earlyAnswerHook (limits: DrainLimits): onSendHookHandler {
  return (request, reply, payload, done) => {
    const raw = request.raw
    if (!raw.complete && announcesBody(raw.headers) && String(reply.getHeader('connection')).toLowerCase() !== 'close') {
      const headers = discardUnreadBody(raw, limits)
      if (headers.connection !== undefined) void reply.header('connection', headers.connection)
    }
    done(null, payload)
  }
}
