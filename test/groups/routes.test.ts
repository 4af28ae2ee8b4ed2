// One process for the routes: reads, cycles and their withdrawal, health, uploads and their mistakes (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/routes/towns.test.ts': async () => await import('../routes/towns.test.js'),
  'test/routes/latest.test.ts': async () => await import('../routes/latest.test.js'),
  'test/routes/prices.test.ts': async () => await import('../routes/prices.test.js'),
  'test/routes/prices-csv.test.ts': async () => await import('../routes/prices-csv.test.js'),
  'test/routes/head.test.ts': async () => await import('../routes/head.test.js'),
  'test/routes/errors.test.ts': async () => await import('../routes/errors.test.js'),
  'test/routes/town-identity.test.ts': async () => await import('../routes/town-identity.test.js'),
  'test/routes/hostile-parameters.test.ts': async () => await import('../routes/hostile-parameters.test.js'),
  'test/routes/deprecated-shapes.test.ts': async () => await import('../routes/deprecated-shapes.test.js'),
  'test/routes/cycles.test.ts': async () => await import('../routes/cycles.test.js'),
  'test/routes/cycles-withdraw.test.ts': async () => await import('../routes/cycles-withdraw.test.js'),
  'test/routes/cycle-warnings.test.ts': async () => await import('../routes/cycle-warnings.test.js'),
  'test/routes/accepted-cycle-window.test.ts': async () => await import('../routes/accepted-cycle-window.test.js'),
  'test/routes/health.test.ts': async () => await import('../routes/health.test.js'),
  'test/routes/dry-run-cap.test.ts': async () => await import('../routes/dry-run-cap.test.js'),
  'test/routes/ingest.test.ts': async () => await import('../routes/ingest.test.js'),
  'test/routes/ingest-auth.test.ts': async () => await import('../routes/ingest-auth.test.js'),
  'test/routes/ingest-limits.test.ts': async () => await import('../routes/ingest-limits.test.js'),
  'test/routes/ingest-mistakes.test.ts': async () => await import('../routes/ingest-mistakes.test.js'),
  'test/routes/ingest-upsert.test.ts': async () => await import('../routes/ingest-upsert.test.js')
})
