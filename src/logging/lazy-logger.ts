import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions, FastifyChildLoggerFactory } from 'fastify/types/logger.js'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/** The numeric levels of a pino logger (`logger.levels.values`), when the logger has them. */
function levelValues (logger: FastifyBaseLogger): Record<string, number> | undefined {
  return (logger as { levels?: { values?: Record<string, number> } }).levels?.values
}

/**
 * A request's logger that makes its pino child (the request id bound into it) only when
 * something is logged at an enabled level: Fastify makes one for every request, and almost none
 * is written to (D45 logging). What is logged, and with which bindings, is unchanged.
 */
class LazyChildLogger {
  private made: FastifyBaseLogger | undefined

  constructor (private readonly parent: FastifyBaseLogger, private readonly bindings: Bindings, private readonly options: ChildLoggerOptions) {}

  get level (): string {
    return this.made?.level ?? this.options.level ?? this.parent.level
  }

  set level (level: string) {
    this.real().level = level
  }

  // Methods on the prototype: a request's logger is one small object, made per request.
  fatal (...args: unknown[]): void { this.log('fatal', args) }
  error (...args: unknown[]): void { this.log('error', args) }
  warn (...args: unknown[]): void { this.log('warn', args) }
  info (...args: unknown[]): void { this.log('info', args) }
  debug (...args: unknown[]): void { this.log('debug', args) }
  trace (...args: unknown[]): void { this.log('trace', args) }
  silent (): void {}

  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options)
  }

  private real (): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options)
    return this.made
  }

  private log (level: Level, args: unknown[]): void {
    const values = levelValues(this.parent)
    const threshold = values?.[this.level]
    // Below the logger's level: nothing is written, so no child is needed. Unknown levels
    // (a logger that is not pino's) always go to the real child, which decides.
    if (values !== undefined && threshold !== undefined && (values[level] as number) < threshold) return
    const child = this.real() as unknown as Record<Level, (...a: unknown[]) => void>
    child[level](...args)
  }
}

/** Fastify's `childLoggerFactory`: each request's logger, made on first use (LazyChildLogger). */
export const lazyChildLoggerFactory: FastifyChildLoggerFactory = function (logger, bindings, options) {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger
}
