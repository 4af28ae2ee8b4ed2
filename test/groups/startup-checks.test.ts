// One process for configuration, start-up checks and the services the tests need (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/config.test.ts': async () => await import('../config.test.js'),
  'test/services.test.ts': async () => await import('../services.test.js'),
  'test/serving-thread-first.test.ts': async () => await import('../serving-thread-first.test.js'),
  'test/startup/data-dir-lock.test.ts': async () => await import('../startup/data-dir-lock.test.js'),
  'test/startup/node-runtime.test.ts': async () => await import('../startup/node-runtime.test.js'),
  'test/startup/start-line.test.ts': async () => await import('../startup/start-line.test.js'),
  'test/startup/startup-errors.test.ts': async () => await import('../startup/startup-errors.test.js'),
  'test/startup/safe-defaults.test.ts': async () => await import('../startup/safe-defaults.test.js')
})
