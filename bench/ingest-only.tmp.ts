import { createBenchDatabase } from './database.js'
import { benchIngest } from './ingest.js'
import { startService, stopAll } from './processes.js'
import { openDatabase } from '../src/db/client.js'
import { migrateDatabase } from '../src/db/migrate.js'
const db = await createBenchDatabase('postgres://postgres@127.0.0.1:5432/postgres')
try {
  const pg = await openDatabase({ url: db.url, poolMax: 1 })
  await migrateDatabase(pg, db.url)
  await pg.close()
  const service = await startService('service', { databaseUrl: db.url })
  const timings = await benchIngest(service.url, db.sql, Number(process.env.N ?? 5))
  console.log(JSON.stringify(timings))
} finally {
  await stopAll()
  await db.drop()
}
process.exit(0)
