// One process for domain rules, CSV and export text, the ingest's checks and its thread (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/domain/cycle.test.ts': async () => await import('../domain/cycle.test.js'),
  'test/domain/fuels.test.ts': async () => await import('../domain/fuels.test.js'),
  'test/domain/town-name.test.ts': async () => await import('../domain/town-name.test.js'),
  'test/domain/town.test.ts': async () => await import('../domain/town.test.js'),
  'test/export/csv.test.ts': async () => await import('../export/csv.test.js'),
  'test/export/negotiation.test.ts': async () => await import('../export/negotiation.test.js'),
  'test/ingest/csv-batches.test.ts': async () => await import('../ingest/csv-batches.test.js'),
  'test/ingest/csv.test.ts': async () => await import('../ingest/csv.test.js'),
  'test/ingest/cycle-warnings.test.ts': async () => await import('../ingest/cycle-warnings.test.js'),
  'test/ingest/plausibility.test.ts': async () => await import('../ingest/plausibility.test.js'),
  'test/ingest/sample.test.ts': async () => await import('../ingest/sample.test.js'),
  'test/ingest/slices.test.ts': async () => await import('../ingest/slices.test.js'),
  'test/ingest/csv-off-thread.test.ts': async () => await import('../ingest/csv-off-thread.test.js')
})
