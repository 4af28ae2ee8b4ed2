import type { FastifyReply, FastifyRequest } from 'fastify'
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino'
import { outputDestination } from './log-destination.js'

/** pino's options, with the destination stream Fastify's `logger` option also accepted; false for none. */
export type LoggerSetting = boolean | (LoggerOptions & { stream?: DestinationStream | NodeJS.WritableStream }) | undefined

/** The fields Fastify's own logger prints for a request, a reply and an error. */
const serializers = {
  req: (request: FastifyRequest) => ({
    method: request.method,
    url: request.url,
    version: request.headers['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket.remotePort
  }),
  res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
  err: pino.stdSerializers.err
}

/** D45 logging: the service's pino, used in place of Fastify's (see app.ts); none without options.
 * Without a stream of its own it writes to stdout, where a reader that has gone is dropped (D60). */
export function createServiceLogger (setting: LoggerSetting): Logger | undefined {
  if (typeof setting !== 'object') return undefined
  const { stream, ...options } = setting
  const merged = { ...options, serializers: { ...serializers, ...options.serializers } }
  if (stream === undefined && options.transport !== undefined) return pino(merged)
  return pino(merged, (stream ?? outputDestination()) as DestinationStream)
}
