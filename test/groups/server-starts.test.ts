// One process for the server started as npm start and as a process of its own (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/startup/npm-start.test.ts': async () => await import('../startup/npm-start.test.js'),
  'test/startup/server-process.test.ts': async () => await import('../startup/server-process.test.js')
})
