// One process for the queries on the test database: ingest writes, PGlite COPY, plans, town order (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/db/ingest-write.test.ts': async () => await import('../db/ingest-write.test.js'),
  'test/db/pglite-copy.test.ts': async () => await import('../db/pglite-copy.test.js'),
  'test/db/plans.test.ts': async () => await import('../db/plans.test.js'),
  'test/db/town-order.test.ts': async () => await import('../db/town-order.test.js')
})
