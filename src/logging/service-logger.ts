import type { FastifyReply, FastifyRequest } from 'fastify'
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino'
import { errorFields } from './error-fields.js'
import { outputDestination } from './log-destination.js'
import { RepeatedFailures } from './repeated-failures.js'

/** pino's options, with the destination stream Fastify's `logger` option also accepted; false for none. */
export type LoggerSetting = boolean | (LoggerOptions & {
  stream?: DestinationStream | NodeJS.WritableStream
  repeatWindowMs?: number
}) | undefined

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
  err: errorFields // the driver's message and code, never a query or its parameters
}

const repeats = new WeakMap<Logger, RepeatedFailures>()

export function flushRepeatedFailures (log: Logger): void {
  repeats.get(log)?.flush()
}

/** Used in place of Fastify's logger so one access line replaces its request lines; stdout drops a reader that has gone (D60). */
export function createServiceLogger (setting: LoggerSetting): Logger | undefined {
  if (typeof setting !== 'object') return undefined
  const { stream, repeatWindowMs, ...options } = setting
  const filter = new RepeatedFailures(repeatWindowMs)
  const merged: LoggerOptions = {
    ...options,
    serializers: { ...serializers, ...options.serializers },
    hooks: { ...options.hooks, logMethod (args, method, level) { filter.logMethod(this, args, method, level) } }
  }
  const log = stream === undefined && options.transport !== undefined ? pino(merged) : pino(merged, (stream ?? outputDestination()) as DestinationStream)
  filter.root = log
  repeats.set(log, filter)
  return log
}
