// One process for the export of a large table and uploads in slices (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/export/export-gate.test.ts': async () => await import('../export/export-gate.test.js'),
  'test/routes/ingest-slices.test.ts': async () => await import('../routes/ingest-slices.test.js')
})
