import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'

/** A lingering close drains at most LINGER_FACTOR × MAX_UPLOAD_BYTES. */
export const LINGER_FACTOR = 5

const DRAIN_IDLE_MS = 2_000
const DRAIN_LINGER_MS = 30_000

/** Does the request announce a body (RFC 9112 6.3: Content-Length or Transfer-Encoding)? */
export function announcesBody (headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length']
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/** Discards the rest of an unread body, at most `maxBytes`; false when it announces more, so the connection must close. */
function discardUnreadBody (request: IncomingMessage, maxBytes: number): boolean {
  if (Number(request.headers['content-length']) > maxBytes) return false
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
    if (seen > maxBytes) giveUp()
    else idle.refresh()
  }
  // unref: a server that is shutting down does not wait for a client's leftovers.
  const idle = setTimeout(giveUp, DRAIN_IDLE_MS).unref()
  const linger = setTimeout(giveUp, DRAIN_LINGER_MS).unref()
  request.on('data', onData)
  request.once('end', stop)
  request.once('close', stop)
  request.resume()
  return true
}

/** Drains an early answer's unread body, so the client reads the answer instead of a reset (D29). */
export function drainEarlyAnswer (request: FastifyRequest, reply: FastifyReply, maxBytes: number): void {
  const raw = request.raw
  // `complete`: the parser has seen the whole body; Node discards what is buffered by itself.
  if (raw.complete || !announcesBody(raw.headers) || String(reply.getHeader('connection')).toLowerCase() === 'close') return
  if (!discardUnreadBody(raw, maxBytes)) void reply.header('connection', 'close')
}
