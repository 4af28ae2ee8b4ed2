// One process for logs, metrics and a database outage (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/ops/logging.test.ts': async () => await import('../ops/logging.test.js'),
  'test/ops/lazy-logger.test.ts': async () => await import('../ops/lazy-logger.test.js'),
  'test/ops/metrics.test.ts': async () => await import('../ops/metrics.test.js'),
  'test/ops/failure-logs.test.ts': async () => await import('../ops/failure-logs.test.js')
})
