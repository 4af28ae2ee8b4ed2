// One process for auth failures, CORS, validation errors, the plugins, HTTP caching (test/README.md, "Groups").
import { runFiles } from '../support/file-test.js'

runFiles({
  'test/auth/failed-tokens.test.ts': async () => await import('../auth/failed-tokens.test.js'),
  'test/cors/preflight.test.ts': async () => await import('../cors/preflight.test.js'),
  'test/errors/validation.test.ts': async () => await import('../errors/validation.test.js'),
  'test/plugins/dependencies.test.ts': async () => await import('../plugins/dependencies.test.js'),
  'test/plugins/edge.test.ts': async () => await import('../plugins/edge.test.js'),
  'test/http-caching/cached-body.test.ts': async () => await import('../http-caching/cached-body.test.js'),
  'test/http-caching/surrogate-keys.test.ts': async () => await import('../http-caching/surrogate-keys.test.js'),
  'test/http-caching/vary.test.ts': async () => await import('../http-caching/vary.test.js')
})
