import type { PGlite } from '@electric-sql/pglite'

/** The calls through which the service reaches PGlite (Drizzle's, the migrator's). */
const GUARDED = new Set<PropertyKey>(['query', 'exec', 'transaction', 'sql', 'execProtocol', 'execProtocolRaw', 'describeQuery'])

class EmbeddedDatabaseStopped extends Error {
  readonly severity = 'PANIC'
  readonly code: string | undefined

  constructor (panic: Error & { code?: string }) {
    super(`the embedded database stopped after a PANIC (${panic.message}): restart the service`)
    this.name = 'EmbeddedDatabaseStopped'
    this.code = panic.code
  }
}

/** After a PANIC, PGlite's next parameterised query blocks the event loop for good, so later calls fail at once (D61). */
export function stopAfterPanic (client: PGlite): PGlite {
  let panic: (Error & { code?: string }) | undefined
  return new Proxy(client, {
    get (target, property) {
      const value = Reflect.get(target, property, target) as unknown
      if (typeof value !== 'function') return value
      // PGlite keeps its state in private fields: its methods must run on the instance itself.
      if (!GUARDED.has(property)) return value.bind(target)
      return async (...args: unknown[]) => {
        if (panic !== undefined) throw new EmbeddedDatabaseStopped(panic)
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
        } catch (err) {
          if ((err as { severity?: unknown }).severity === 'PANIC') panic = err as Error
          throw err
        }
      }
    }
  })
}
