// One process for the ingest and export checks on the test database, and the queries (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/export/formula-guard.test.ts': async () => await import('../export/formula-guard.test.js'),
  'test/ingest/csv-rejections.test.ts': async () => await import('../ingest/csv-rejections.test.js'),
  'test/ingest/town-names.test.ts': async () => await import('../ingest/town-names.test.js'),
  'test/db/ingest-write.test.ts': async () => await import('../db/ingest-write.test.js'),
  'test/db/pglite-copy.test.ts': async () => await import('../db/pglite-copy.test.js'),
  'test/db/plans.test.ts': async () => await import('../db/plans.test.js'),
  'test/db/town-order.test.ts': async () => await import('../db/town-order.test.js')
})
