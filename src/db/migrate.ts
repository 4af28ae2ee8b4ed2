import { join } from 'node:path'
import { projectRoot } from '../project-root.js'
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import type { PgliteDatabase } from 'drizzle-orm/pglite'
import postgres from 'postgres'
import type { Database } from './client.js'
import { MIGRATION_LOCK_KEY } from './locks.js'

const MIGRATIONS_FOLDER = join(projectRoot(), 'drizzle')

export async function migrateDatabase (database: Database, url?: string): Promise<void> {
  if (database.kind === 'pglite') {
    const { migrate: migratePglite } = await import('drizzle-orm/pglite/migrator')
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder: MIGRATIONS_FOLDER })
    return
  }
  if (url === undefined) throw new Error('migrateDatabase needs the PostgreSQL URL')
  const connection: Record<string, string> = {}
  if (database.schema !== undefined) connection.search_path = database.schema
  const sql = postgres(url, { max: 1, onnotice: () => {}, connection, connect_timeout: 10 })
  try {
    await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`
    await migratePostgres(drizzlePostgres(sql), {
      migrationsFolder: MIGRATIONS_FOLDER,
      ...(database.schema !== undefined ? { migrationsSchema: database.schema } : {})
    })
  } finally {
    await sql.end({ timeout: 5 })
  }
}
