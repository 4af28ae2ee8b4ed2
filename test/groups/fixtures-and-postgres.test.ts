// One process for the suite's fixtures and the tests that need PostgreSQL, as the test database or as a server (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/suite/fixtures.test.ts': async () => await import('../suite/fixtures.test.js'),
  'test/suite/postgres-list.test.ts': async () => await import('../suite/postgres-list.test.js'),
  'test/postgres/copy.test.ts': async () => await import('../postgres/copy.test.js'),
  'test/postgres/dry-run-latency.test.ts': async () => await import('../postgres/dry-run-latency.test.js'),
  'test/postgres/notifications.test.ts': async () => await import('../postgres/notifications.test.js'),
  'test/postgres/refresh-stall.test.ts': async () => await import('../postgres/refresh-stall.test.js'),
  'test/postgres/withdraw-lock.test.ts': async () => await import('../postgres/withdraw-lock.test.js'),
  'test/db/postgres/connect-statements.test.ts': async () => await import('../db/postgres/connect-statements.test.js'),
  'test/db/postgres/copy.test.ts': async () => await import('../db/postgres/copy.test.js'),
  'test/db/postgres/patch.test.ts': async () => await import('../db/postgres/patch.test.js'),
  'test/db/postgres/sockets.test.ts': async () => await import('../db/postgres/sockets.test.js'),
  'test/db/postgres/timeouts.test.ts': async () => await import('../db/postgres/timeouts.test.js')
})
