// One process for the checks of the code and of the suite's own lists (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/scripts/host-pace.test.ts': async () => await import('../scripts/host-pace.test.js'),
  'test/suite/ci-failures.test.ts': async () => await import('../suite/ci-failures.test.js'),
  'test/suite/comments.test.ts': async () => await import('../suite/comments.test.js'),
  'test/suite/layers.test.ts': async () => await import('../suite/layers.test.js'),
  'test/suite/stage-files.test.ts': async () => await import('../suite/stage-files.test.js'),
  'test/suite/tap-plugins.test.ts': async () => await import('../suite/tap-plugins.test.js')
})
