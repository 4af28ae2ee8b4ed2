// One process for the tests that need PostgreSQL as the test database (skipped on PGlite) (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/postgres/copy.test.ts': async () => await import('../postgres/copy.test.js'),
  'test/postgres/dry-run-latency.test.ts': async () => await import('../postgres/dry-run-latency.test.js'),
  'test/postgres/notifications.test.ts': async () => await import('../postgres/notifications.test.js'),
  'test/postgres/refresh-stall.test.ts': async () => await import('../postgres/refresh-stall.test.js'),
  'test/postgres/withdraw-lock.test.ts': async () => await import('../postgres/withdraw-lock.test.js')
})
