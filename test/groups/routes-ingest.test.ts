// One process for the upload route: auth, limits, mistakes, upserts (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/routes/ingest.test.ts': async () => await import('../routes/ingest.test.js'),
  'test/routes/ingest-auth.test.ts': async () => await import('../routes/ingest-auth.test.js'),
  'test/routes/ingest-limits.test.ts': async () => await import('../routes/ingest-limits.test.js'),
  'test/routes/ingest-mistakes.test.ts': async () => await import('../routes/ingest-mistakes.test.js'),
  'test/routes/ingest-upsert.test.ts': async () => await import('../routes/ingest-upsert.test.js')
})
