/**
 * The test processes' TypeScript loader (tap's node-arg in package.json), in place of tsx: only
 * the project's own `.ts` files go through it, each compiled once by TypeScript's transpileModule
 * and kept in node_modules/.cache until its text changes (test/README.md has the figures).
 */
import module, { register } from 'node:module'
import process from 'node:process'
import { URL, fileURLToPath } from 'node:url'

// Node 22.1+ also keeps V8's compiled code of every module loaded from here on, on disk, so a test
// process on Node 24 loads the app ~10% cheaper (Node 20 has no such cache). Only when tap collects
// no coverage (its own variable says '0'): code read from the cache loses block-level coverage.
if (process.env._TAPJS_PROCESSINFO_COVERAGE_ === '0') {
  module.enableCompileCache?.(fileURLToPath(new URL('../../node_modules/.cache/fuel-price-service/compile-cache', import.meta.url)))
}

// Node 22.15+ runs the hooks in this thread; Node 20 only in a thread of their own, with a round
// trip for every module a test imports (test/README.md has what that costs).
if (typeof module.registerHooks === 'function') {
  const { resolveSync, loadSync } = await import('./typescript-hooks.mjs')
  module.registerHooks({ resolve: resolveSync, load: loadSync })
} else {
  register('./typescript-hooks.mjs', import.meta.url)
}
