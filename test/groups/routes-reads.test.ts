// One process for the read routes: towns, latest, prices (JSON and CSV), HEAD, errors, hostile parameters (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/routes/towns.test.ts': async () => await import('../routes/towns.test.js'),
  'test/routes/latest.test.ts': async () => await import('../routes/latest.test.js'),
  'test/routes/prices.test.ts': async () => await import('../routes/prices.test.js'),
  'test/routes/prices-csv.test.ts': async () => await import('../routes/prices-csv.test.js'),
  'test/routes/head.test.ts': async () => await import('../routes/head.test.js'),
  'test/routes/errors.test.ts': async () => await import('../routes/errors.test.js'),
  'test/routes/town-identity.test.ts': async () => await import('../routes/town-identity.test.js'),
  'test/routes/hostile-parameters.test.ts': async () => await import('../routes/hostile-parameters.test.js'),
  'test/routes/deprecated-shapes.test.ts': async () => await import('../routes/deprecated-shapes.test.js')
})
