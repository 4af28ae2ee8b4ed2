import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import { openDatabase, type Database } from './client.js'
import { migrateDatabase } from './migrate.js'

declare module 'fastify' {
  interface FastifyInstance {
    database: Database
  }
}

interface DatabasePluginOptions {
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dbPoolMax' | 'dbStatementTimeoutMs'>
  /** A database opened (and migrated) by the caller, who also closes it; tests use this. */
  database?: Database | undefined
}

/** `app.database`: PostgreSQL, or PGlite without DATABASE_URL, migrated; closed with the app when opened here. */
async function database (app: FastifyInstance, opts: DatabasePluginOptions): Promise<void> {
  let db = opts.database
  if (db === undefined) {
    const { config } = opts
    db = await openDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      poolMax: config.dbPoolMax,
      statementTimeoutMs: config.dbStatementTimeoutMs
    })
    const owned = db
    app.addHook('onClose', async () => { await owned.close() })
    await migrateDatabase(db, config.databaseUrl)
  }
  app.decorate('database', db)
}

export default fp(database, { name: 'database' })
