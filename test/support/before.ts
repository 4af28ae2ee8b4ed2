import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { pgliteTemplate, templatePath } from './pglite-template.js'

/**
 * tap's `before` script (package.json "tap"): the migrated PGlite template is built here, once,
 * before the files start in parallel, so none of them waits on another's build. It runs before
 * every tap run, one file or all of them, so it costs next to nothing when the dump is there.
 * dist/ (for the tests that start the server as `npm start` does) is not built here: a run of
 * files that never start it should not wait for a compiler (test/support/dist.ts).
 */
const started = Date.now()
// When this run began: `npm run test:times` lists the files whose results are newer.
const tapDir = fileURLToPath(new URL('../../.tap/', import.meta.url))
mkdirSync(tapDir, { recursive: true })
writeFileSync(`${tapDir}run-started`, `${new Date(started).toISOString()}\n`)
const template = templatePath()
if (!existsSync(template)) {
  await pgliteTemplate()
  console.log(`# PGlite template made in ${Date.now() - started} ms: ${template.replace(/^.*node_modules/, 'node_modules')}`)
}
