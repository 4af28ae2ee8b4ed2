// One process for the server on a terminal that goes away, and its shutdown deadline (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/ops/lost-terminal.test.ts': async () => await import('../ops/lost-terminal.test.js'),
  'test/ops/lost-terminal-no-hangup.test.ts': async () => await import('../ops/lost-terminal-no-hangup.test.js'),
  'test/ops/terminal-logs.test.ts': async () => await import('../ops/terminal-logs.test.js'),
  'test/ops/shutdown-deadline.test.ts': async () => await import('../ops/shutdown-deadline.test.js')
})
