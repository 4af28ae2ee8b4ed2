import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { templatePath } from './pglite-template.js'
// @ts-expect-error plain JavaScript, loaded by tap's node-arg before each test file
import { removeLeftBehind } from './fixtures-per-process.mjs'
// @ts-expect-error plain JavaScript for Node's module hooks, with no declarations
import { compileAhead } from './typescript-hooks.mjs'

/**
 * tap's `before` script (package.json "tap"): the migrated PGlite template is built here, once,
 * before the files start in parallel, so none of them waits on another's build; so is the
 * TypeScript cache of the test loader, which a fresh checkout lacks. It runs before
 * every tap run, one file or all of them, so it costs next to nothing when the dump is there.
 * dist/ (for the tests that start the server as `npm start` does) is not built here: a run of
 * files that never start it should not wait for a compiler (test/support/dist.ts).
 */
const started = Date.now()
// When this run began: `npm run test:times` lists the files whose results are newer.
const tapDir = fileURLToPath(new URL('../../.tap/', import.meta.url))
mkdirSync(tapDir, { recursive: true })
writeFileSync(`${tapDir}run-started`, `${new Date(started).toISOString()}\n`)
// Test directories carry their process's pid, so a run beside this one keeps its own; those of
// a process that is gone (killed before its clean-up) go.
removeLeftBehind(join(tapDir, 'fixtures'))

const template = templatePath()
/** The template, made in a process of its own while this one compiles the TypeScript below: two cores, two jobs. */
async function makeTemplate (): Promise<void> {
  // tap's coverage is off in that process (its processinfo hook reads this variable): tap collects
  // this script's coverage even when coverage is off, so a fresh clone's npm test printed a table
  // of the src/db files the migrations ran, 58 % of lines, for a run that measured nothing.
  const child = spawn(process.execPath, ['--import=./test/support/typescript.mjs', '--input-type=module', '-e',
    'await (await import("./test/support/pglite-template.ts")).pgliteTemplate()'], {
    cwd: fileURLToPath(new URL('../../', import.meta.url)), env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', _TAPJS_PROCESSINFO_COVERAGE_: '0' }, stdio: 'inherit'
  })
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', resolve)
  })
  if (code !== 0) throw new Error(`the PGlite template's process exited with ${String(code)}`)
  console.log(`# PGlite template made in ${Date.now() - started} ms: ${template.replace(/^.*node_modules/, 'node_modules')}`)
}
const templateMade = existsSync(template) ? undefined : makeTemplate()

// Every TypeScript file a test process may load, compiled once here rather than by several test
// processes at a time, each loading TypeScript first (test/README.md has the figures).
const root = fileURLToPath(new URL('../../', import.meta.url))
const typescriptFiles = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
  const path = join(dir, entry.name)
  if (entry.isDirectory()) return typescriptFiles(path)
  return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
})
const compiledAt = Date.now()
const compiled = (compileAhead as (paths: string[]) => number)(['src', 'test', 'scripts'].flatMap((dir) => typescriptFiles(join(root, dir))))
if (compiled > 0) console.log(`# TypeScript: ${compiled} files compiled for the test loader in ${Date.now() - compiledAt} ms`)
await templateMade
