import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyServerOptions } from 'fastify'
import { NO_STORE } from '../http-caching/index.js'

type ClientErrorHandler = NonNullable<FastifyServerOptions['clientErrorHandler']>

/** How long a connection answered here is kept (half-closed) so the client can read the answer. */
const CLIENT_ERROR_LINGER_MS = 2000

/** node:http's own 400, 408 and 431, in the error envelope, then closed after a linger so the client can read it. */
export const clientErrorHandler: ClientErrorHandler = function (err, socket: Socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
  const body = JSON.stringify({ detail: STATUS_CODES[status] })
  // As node:http does: never write into a response the app has begun sending.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (socket.writable && inFlight?.headersSent !== true) {
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\ncache-control: ${NO_STORE}\r\nconnection: close\r\n\r\n${body}`)
  }
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref()
}
