// One process for the browser helper, CORS from a page and the favicon; the admin page, a minute alone, runs on its own (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/browser/chromium.test.ts': async () => await import('../browser/chromium.test.js'),
  'test/browser/cors.test.ts': async () => await import('../browser/cors.test.js'),
  'test/browser/favicon.test.ts': async () => await import('../browser/favicon.test.js')
})
