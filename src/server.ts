import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { buildApp, terminalLogger } from './app.js'
import { loadConfig, type Config } from './config.js'
import { cycleOf, todayInKenya } from './domain/cycle.js'
import { releaseLostTerminal } from './logging/log-destination.js'
import { servingThreadFirst } from './serving-thread-first.js'
import { armShutdownDeadline } from './shutdown-deadline.js'
import { shutdownDelayMs } from './shutdown.js'
import { startLine } from './start-line.js'
import { startupErrorLine, type StartupContext } from './startup-errors.js'

/** close-with-grace's own timer ends a slow shutdown this long before the hard deadline does (D60). */
const HARD_DEADLINE_LEAD_MS = 1000

/** A failed start is one line on stderr and exit code 1, never a stack or a JSON log. */
function cannotStart (err: unknown, context: StartupContext): never {
  process.stderr.write(`${startupErrorLine(err, context)}\n`)
  process.exit(1)
}

/** `.env` fills in only what the environment does not already set. */
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
  app = await buildApp({ config, logger: terminalLogger(config, process.stdout.isTTY, process.env.NODE_ENV) })
} catch (err) {
  cannotStart(err, config)
}

// a lost terminal (SIGHUP) is a shutdown like any other; close-with-grace logs through the app so every line is JSON (D60)
const graceMs = shutdownDelayMs(config)
closeWithGrace({
  delay: graceMs - HARD_DEADLINE_LEAD_MS,
  // A fault signal handled in JavaScript returns to the faulting instruction and spins: a crash stays a crash (D60).
  skip: ['SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL'],
  logger: { error: (msg: unknown) => { app.log.error(msg instanceof Error ? { err: msg } : { reason: String(msg) }, 'shutdown') } }
}, async ({ signal, err }) => {
  await armShutdownDeadline(graceMs)
  if (err !== undefined) app.log.error({ err }, 'closing after an uncaught error')
  else app.log.info({ signal }, 'shutting down')
  await app.close()
})
process.once('exit', releaseLostTerminal)

const listening = startLine() // shown at every LOG_LEVEL
try {
  await app.listen({ port: config.port, host: config.host, listenTextResolver: listening.listenTextResolver })
} catch (err) {
  cannotStart(err, config)
}
listening.announce(app.log)
servingThreadFirst()

// A first run starts empty: say how to get data in (the seed works while the service runs).
if ((await app.cycles.freshness(cycleOf(todayInKenya()).validFrom).catch(() => ({ latest: '' }))).latest === null) {
  app.log.info('no prices stored yet: `npm run seed` loads a year of sample prices (the service may keep running), or upload a cycle to POST /v1/ingest/csv')
}
