/** `npm run db:migrate`: applies drizzle/ migrations for deploy pipelines that migrate before start. */
import { ConfigError, loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/client.js'
import { migrateDatabase } from '../src/db/migrate.js'

try {
  const config = loadConfig()
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolMax: 1 })
  try {
    await migrateDatabase(database, config.databaseUrl)
    console.log(`migrations applied (${database.kind === 'postgres' ? 'PostgreSQL' : `PGlite at ${config.dataDir}`})`)
  } finally {
    await database.close()
  }
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `migration failed: ${(err as Error).message}`)
  process.exit(1)
}
