import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { LatestPricesCache } from '../cache/latest-prices-cache.js'
import type { Config } from '../config.js'
import { openDatabase, type Database } from '../db/client.js'
import { migrateDatabase } from '../db/migrate.js'
import { PricesRepository } from '../db/prices.js'

declare module 'fastify' {
  interface FastifyInstance {
    database: Database
    prices: PricesRepository
    latestCache: LatestPricesCache
  }
}

export interface DatabasePluginOptions {
  config: Config
  /** A database opened (and migrated) by the caller, who also closes it; tests use this. */
  database?: Database | undefined
}

/**
 * Opens the database named by the config (PostgreSQL when DATABASE_URL is set, else embedded
 * PGlite under DATA_DIR, D28), applies the committed migrations, and decorates the app with the
 * repository and the latest-prices cache.
 */
async function database (app: FastifyInstance, opts: DatabasePluginOptions): Promise<void> {
  let db = opts.database
  if (db === undefined) {
    db = await openDatabase({
      url: opts.config.databaseUrl,
      dataDir: opts.config.dataDir,
      poolMax: opts.config.dbPoolMax,
      statementTimeoutMs: opts.config.dbStatementTimeoutMs
    })
    const owned = db
    app.addHook('onClose', async () => { await owned.close() })
    await migrateDatabase(db, opts.config.databaseUrl)
  }
  const prices = new PricesRepository(db.db)
  app.decorate('database', db)
  app.decorate('prices', prices)
  app.decorate('latestCache', new LatestPricesCache(async () => await prices.latestPrices()))
}

export default fp(database, { name: 'database' })
