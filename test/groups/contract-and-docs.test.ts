// One process for the served contract and documents: operations, response checks, docs pages (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/contract/operations.test.ts': async () => await import('../contract/operations.test.js'),
  'test/contract/response-validation.test.ts': async () => await import('../contract/response-validation.test.js'),
  'test/docs/docs.test.ts': async () => await import('../docs/docs.test.js'),
  'test/docs/root.test.ts': async () => await import('../docs/root.test.js'),
  'test/docs/swagger-ui.test.ts': async () => await import('../docs/swagger-ui.test.js')
})
