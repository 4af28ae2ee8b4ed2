import { mkdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { pgliteTemplate, templatePath } from './pglite-template.js'

/**
 * tap's `before` script (package.json "tap"): the migrated PGlite template is built here, once,
 * before the files start in parallel, so none of them waits on another's build.
 */
const started = Date.now()
// When this run began: `npm run test:times` lists the files whose results are newer.
const tapDir = fileURLToPath(new URL('../../.tap/', import.meta.url))
mkdirSync(tapDir, { recursive: true })
writeFileSync(`${tapDir}run-started`, `${new Date(started).toISOString()}\n`)
await pgliteTemplate()
console.log(`# PGlite template ready in ${Date.now() - started} ms: ${templatePath().replace(/^.*node_modules/, 'node_modules')}`)
