// One process for node:http under the service: early answers, framing, timeouts, the query string (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/http-server/early-answer.test.ts': async () => await import('../http-server/early-answer.test.js'),
  'test/http-server/framing.test.ts': async () => await import('../http-server/framing.test.js'),
  'test/http-server/timeouts.test.ts': async () => await import('../http-server/timeouts.test.js'),
  'test/http-server/query-string.test.ts': async () => await import('../http-server/query-string.test.js')
})
