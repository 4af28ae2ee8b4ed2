// One process for a data directory on a file system that runs out of space (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/ops/full-disk.test.ts': async () => await import('../ops/full-disk.test.js'),
  'test/ops/full-disk-wal.test.ts': async () => await import('../ops/full-disk-wal.test.js'),
  'test/ops/full-disk-postgres.test.ts': async () => await import('../ops/full-disk-postgres.test.js')
})
