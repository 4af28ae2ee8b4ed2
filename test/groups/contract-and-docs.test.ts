// One process for openapi.yaml, the documents and the generated files (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/contract/linters.test.ts': async () => await import('../contract/linters.test.js'),
  'test/contract/openapi-document.test.ts': async () => await import('../contract/openapi-document.test.js'),
  'test/contract/operations.test.ts': async () => await import('../contract/operations.test.js'),
  'test/contract/response-validation.test.ts': async () => await import('../contract/response-validation.test.js'),
  'test/docs/decisions.test.ts': async () => await import('../docs/decisions.test.js'),
  'test/docs/docs.test.ts': async () => await import('../docs/docs.test.js'),
  'test/docs/root.test.ts': async () => await import('../docs/root.test.js'),
  'test/docs/swagger-ui.test.ts': async () => await import('../docs/swagger-ui.test.js'),
  'test/scripts/generate-schemas.test.ts': async () => await import('../scripts/generate-schemas.test.js'),
  'test/scripts/settings-docs.test.ts': async () => await import('../scripts/settings-docs.test.js')
})
