// One process for auth failures, CORS, validation errors, the plugins, HTTP caching, the caches and the rate limit (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/auth/failed-tokens.test.ts': async () => await import('../auth/failed-tokens.test.js'),
  'test/cors/preflight.test.ts': async () => await import('../cors/preflight.test.js'),
  'test/errors/validation.test.ts': async () => await import('../errors/validation.test.js'),
  'test/plugins/dependencies.test.ts': async () => await import('../plugins/dependencies.test.js'),
  'test/plugins/edge.test.ts': async () => await import('../plugins/edge.test.js'),
  'test/http-caching/cached-body.test.ts': async () => await import('../http-caching/cached-body.test.js'),
  'test/http-caching/surrogate-keys.test.ts': async () => await import('../http-caching/surrogate-keys.test.js'),
  'test/http-caching/vary.test.ts': async () => await import('../http-caching/vary.test.js'),
  'test/cache-purge/purge.test.ts': async () => await import('../cache-purge/purge.test.js'),
  'test/cache-purge/settings.test.ts': async () => await import('../cache-purge/settings.test.js'),
  'test/read-cache/commit-and-invalidate.test.ts': async () => await import('../read-cache/commit-and-invalidate.test.js'),
  'test/read-cache/read-cache.test.ts': async () => await import('../read-cache/read-cache.test.js'),
  'test/rate-limit/bounded-keys.test.ts': async () => await import('../rate-limit/bounded-keys.test.js'),
  'test/rate-limit/sliding-window.test.ts': async () => await import('../rate-limit/sliding-window.test.js')
})
