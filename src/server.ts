import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'

let config: Config
try {
  config = loadConfig()
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(err.message)
  process.exit(1)
}

const app = await buildApp({ config })

// SIGTERM/SIGINT: stop accepting, let in-flight requests (an ingest included) finish, exit 0.
closeWithGrace({ delay: 30_000 }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'closing after an uncaught error')
  else app.log.info({ signal }, 'shutting down')
  await app.close()
})

try {
  await app.listen({ port: config.port, host: config.host })
} catch (err) {
  app.log.error({ err }, 'could not start')
  process.exit(1)
}
