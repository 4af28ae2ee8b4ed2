// One process for the clients generated from openapi.yaml, type-checked and run against the service (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/client/typed-client.test.ts': async () => await import('../client/typed-client.test.js'),
  'test/client/generated-clients.test.ts': async () => await import('../client/generated-clients.test.js')
})
