import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { loadConfig, type Config } from './config.js'
import { startupErrorLine, type StartupContext } from './startup-errors.js'

/** D33: a failed start is one line on stderr and exit code 1, never a stack or a JSON log. */
function cannotStart (err: unknown, context: StartupContext): never {
  process.stderr.write(`${startupErrorLine(err, context)}\n`)
  process.exit(1)
}

/** D35: `.env` in the working directory fills in what the environment does not already set. */
function loadDotEnv (): void {
  try {
    process.loadEnvFile('.env')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
}

let config: Config
try {
  loadDotEnv()
  config = loadConfig()
} catch (err) {
  cannotStart(err, { host: '', port: 0, databaseUrl: undefined, dataDir: '' })
}

let app: FastifyInstance
try {
  app = await buildApp({ config })
} catch (err) {
  cannotStart(err, config)
}

// SIGTERM/SIGINT: stop accepting, let in-flight requests (an ingest included) finish, exit 0.
closeWithGrace({ delay: 30_000 }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'closing after an uncaught error')
  else app.log.info({ signal }, 'shutting down')
  await app.close()
})

try {
  await app.listen({ port: config.port, host: config.host })
} catch (err) {
  cannotStart(err, config)
}
