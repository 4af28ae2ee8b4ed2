/**
 * `npm test`'s first step (pretest; `npm run coverage` too): tap's test class built for the plugin
 * list in package.json before tap starts. tap notices a list that differs from the one it was
 * built with and rebuilds, but only for its next run: the run that notices still starts every
 * test file with the loaders of the old list. After an install that old list is tap's default,
 * whose TypeScript plugin (removed here: test/support/typescript.mjs loads our `.ts`) puts
 * ts-node in front of every test process and every import it makes, so the first `npm test` of a
 * fresh clone cost about a fifth more CPU than the next. When the lists agree this costs the
 * reading of tap's config (~0.2 s), never a build.
 */
/* global process, console */ // plain JavaScript for Node: no TypeScript types to declare them
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { TapConfig } from '@tapjs/config'

const require = createRequire(import.meta.url)

/** The plugin list tap's built test class carries (a template literal in its built module). */
function builtSignature () {
  const built = readFileSync(fileURLToPath(import.meta.resolve('@tapjs/test/test-built')), 'utf8')
  return /export const signature = `([^`]*)`/.exec(built)?.[1]
}

/** Runs `args` with this Node; resolves with its exit code. */
function run (args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit' })
    child.once('error', reject)
    child.once('close', (code) => { resolve(code ?? 1) })
  })
}

const config = await TapConfig.load()
if (builtSignature() !== config.pluginSignature) {
  console.error('tap: building its test class for the plugin list in package.json (once after an install)')
  const tap = require.resolve('tap/package.json').replace(/package\.json$/, 'dist/esm/run.mjs')
  // After an install the run's fixtures are missing too: tap's before script (the PGlite template,
  // the TypeScript cache) makes them beside the build, so the two cores share the wait; tap's own
  // run of it then finds them made.
  const codes = await Promise.all([run([tap, 'build']), run(['--import=./test/support/typescript.mjs', 'test/support/before.ts'])])
  const failed = codes.find((code) => code !== 0)
  if (failed !== undefined) process.exit(failed)
}
