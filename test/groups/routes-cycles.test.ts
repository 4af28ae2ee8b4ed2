// One process for cycles, their withdrawal and warnings, the accepted window, health, the dry-run cap (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/routes/cycles.test.ts': async () => await import('../routes/cycles.test.js'),
  'test/routes/cycles-withdraw.test.ts': async () => await import('../routes/cycles-withdraw.test.js'),
  'test/routes/cycle-warnings.test.ts': async () => await import('../routes/cycle-warnings.test.js'),
  'test/routes/accepted-cycle-window.test.ts': async () => await import('../routes/accepted-cycle-window.test.js'),
  'test/routes/health.test.ts': async () => await import('../routes/health.test.js'),
  'test/routes/dry-run-cap.test.ts': async () => await import('../routes/dry-run-cap.test.js')
})
