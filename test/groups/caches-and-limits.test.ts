// One process for the cache purge, the read cache, the rate limit (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/cache-purge/purge.test.ts': async () => await import('../cache-purge/purge.test.js'),
  'test/cache-purge/settings.test.ts': async () => await import('../cache-purge/settings.test.js'),
  'test/read-cache/commit-and-invalidate.test.ts': async () => await import('../read-cache/commit-and-invalidate.test.js'),
  'test/read-cache/read-cache.test.ts': async () => await import('../read-cache/read-cache.test.js'),
  'test/rate-limit/bounded-keys.test.ts': async () => await import('../rate-limit/bounded-keys.test.js'),
  'test/rate-limit/sliding-window.test.ts': async () => await import('../rate-limit/sliding-window.test.js')
})
