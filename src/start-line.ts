import type { FastifyBaseLogger } from 'fastify'

const INFO_OR_BELOW = new Set(['info', 'debug', 'trace'])

/** Shows Fastify's start line at every log level: with info off, a child held at info writes it. */
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
