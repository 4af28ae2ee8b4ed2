// One process for openapi.yaml, the decision log and the generated files, without the service (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/contract/linters.test.ts': async () => await import('../contract/linters.test.js'),
  'test/contract/openapi-document.test.ts': async () => await import('../contract/openapi-document.test.js'),
  'test/docs/decisions.test.ts': async () => await import('../docs/decisions.test.js'),
  'test/scripts/build-admin-page.test.ts': async () => await import('../scripts/build-admin-page.test.js'),
  'test/scripts/generate-schemas.test.ts': async () => await import('../scripts/generate-schemas.test.js'),
  'test/scripts/settings-docs.test.ts': async () => await import('../scripts/settings-docs.test.js')
})
