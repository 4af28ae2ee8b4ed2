// One process for the pages a browser shows: the admin page, CORS from a page, the favicon (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/browser/chromium.test.ts': async () => await import('../browser/chromium.test.js'),
  'test/browser/admin.test.ts': async () => await import('../browser/admin.test.js'),
  'test/browser/cors.test.ts': async () => await import('../browser/cors.test.js'),
  'test/browser/favicon.test.ts': async () => await import('../browser/favicon.test.js')
})
