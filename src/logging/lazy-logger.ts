import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions, FastifyChildLoggerFactory } from 'fastify/types/logger.js'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

function levelValues (logger: FastifyBaseLogger): Record<string, number> | undefined {
  return (logger as { levels?: { values?: Record<string, number> } }).levels?.values
}

/** A request's pino child, made only when something is logged at an enabled level: most requests log nothing (D45). */
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

  isLevelEnabled (level: string): boolean {
    const values = levelValues(this.parent)
    const threshold = values?.[this.level]
    const value = values?.[level]
    return values === undefined || threshold === undefined || value === undefined || value >= threshold
  }

  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options)
  }

  private real (): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options)
    return this.made
  }

  private log (level: Level, args: unknown[]): void {
    // Below the level nothing is written; a non-pino logger's child decides for itself.
    if (!this.isLevelEnabled(level)) return
    const child = this.real() as unknown as Record<Level, (...a: unknown[]) => void>
    child[level](...args)
  }
}

/** Children of `root` when given (the service's pino, Fastify's own logger being off), else of Fastify's. */
export function lazyChildLoggerFactory (root?: FastifyBaseLogger): FastifyChildLoggerFactory {
  return function (logger, bindings, options) {
    return new LazyChildLogger(root ?? logger, bindings, options) as unknown as FastifyBaseLogger
  }
}
