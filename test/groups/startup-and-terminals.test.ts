// One process for configuration, start-up checks, the services the tests need, and the server on a terminal that goes away (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/config.test.ts': async () => await import('../config.test.js'),
  'test/services.test.ts': async () => await import('../services.test.js'),
  'test/serving-thread-first.test.ts': async () => await import('../serving-thread-first.test.js'),
  'test/startup/data-dir-lock.test.ts': async () => await import('../startup/data-dir-lock.test.js'),
  'test/startup/node-runtime.test.ts': async () => await import('../startup/node-runtime.test.js'),
  'test/startup/start-line.test.ts': async () => await import('../startup/start-line.test.js'),
  'test/startup/startup-errors.test.ts': async () => await import('../startup/startup-errors.test.js'),
  'test/startup/safe-defaults.test.ts': async () => await import('../startup/safe-defaults.test.js'),
  'test/ops/lost-terminal.test.ts': async () => await import('../ops/lost-terminal.test.js'),
  'test/ops/lost-terminal-no-hangup.test.ts': async () => await import('../ops/lost-terminal-no-hangup.test.js'),
  'test/ops/terminal-logs.test.ts': async () => await import('../ops/terminal-logs.test.js'),
  'test/ops/shutdown-deadline.test.ts': async () => await import('../ops/shutdown-deadline.test.js')
})
