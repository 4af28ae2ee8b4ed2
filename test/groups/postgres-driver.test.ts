// One process for the PostgreSQL driver: its statements, COPY, the patch, sockets and timeouts (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/db/postgres/connect-statements.test.ts': async () => await import('../db/postgres/connect-statements.test.js'),
  'test/db/postgres/copy.test.ts': async () => await import('../db/postgres/copy.test.js'),
  'test/db/postgres/patch.test.ts': async () => await import('../db/postgres/patch.test.js'),
  'test/db/postgres/sockets.test.ts': async () => await import('../db/postgres/sockets.test.js'),
  'test/db/postgres/timeouts.test.ts': async () => await import('../db/postgres/timeouts.test.js')
})
