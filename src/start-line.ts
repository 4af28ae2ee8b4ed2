import type { FastifyBaseLogger } from 'fastify'

const INFO_OR_BELOW = new Set(['info', 'debug', 'trace'])

/**
 * D50: the "Server listening at" lines show at every LOG_LEVEL. Fastify logs them at info; when
 * info is off (warn, error, fatal, silent) a child logger held at info writes the same lines, so
 * they keep the log's format (JSON, or pino-pretty at a terminal). Pass `listenTextResolver` to
 * `app.listen`, then call `announce(app.log)`.
 */
export function startLine (): { listenTextResolver: (address: string) => string, announce: (log: FastifyBaseLogger) => void } {
  const lines: string[] = []
  return {
    listenTextResolver: (address) => {
      const line = `Server listening at ${address}`
      lines.push(line)
      return line
    },
    announce: (log) => {
      if (INFO_OR_BELOW.has(log.level)) return // Fastify's own lines are out
      const info = log.child({}, { level: 'info' })
      for (const line of lines) info.info(line)
    }
  }
}
