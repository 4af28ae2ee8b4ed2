/**
 * The test files of one of .ci/run's stages, one path a line, for `npm test -- $(…)`:
 *
 *   npx tsx scripts/test-files.ts database   files that can depend on the test database: those whose
 *                                            imports reach test/helper.ts (build, testDatabase, …),
 *                                            test/postgres/ included; the PostgreSQL stage runs these,
 *                                            under Node 24
 *   npx tsx scripts/test-files.ts runtime    the other files whose behaviour rests on what differs
 *                                            between Node lines (below); the Node 24 stage runs
 *                                            these on PGlite
 *
 * Both are computed from the files on disk, so a new test file is placed by where it lives and
 * what it imports, never by a list to keep up to date. A group of test/groups/ (several files in
 * one process) counts as its files do: it reaches the helper when one of them does, and rests on
 * the runtime when one of them does.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const HELPER = join(ROOT, 'test', 'helper.ts')

/**
 * What changes with the Node line under the service: node:http's parser and timeouts, sockets and
 * streams (uploads, lingering close, Redis, PostgreSQL), zlib, timers, worker threads (pino),
 * process start, signals and `.env` loading, V8 running PGlite's WebAssembly, fetch (undici).
 * Pure logic (domain rules, the contract, documents, CSV and feed text, read-cache bookkeeping)
 * and TypeScript compiling (clients, the image's build) do not.
 */
export const RUNTIME_SENSITIVE = [
  'test/http-server/',
  'test/http-caching/',
  'test/startup/',
  'test/db/',
  'test/ops/',
  'test/rate-limit/',
  'test/plugins/',
  'test/routes/ingest',
  'test/suite/',
  'test/services.test.ts'
]

/** The files run inside the groups of test/groups/: package.json's tap `exclude` names each one. */
export function groupedFiles (): string[] {
  const tap = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { tap: { exclude: string[] } }).tap
  return tap.exclude.filter((pattern) => pattern.endsWith('.test.ts') && !pattern.includes('*')).sort()
}

/** The test files a group imports, as paths from the root (its literal `import('../x/y.test.js')`s). */
export function groupMembers (group: string): string[] {
  return importsOf(join(ROOT, group)).filter((f) => f.endsWith('.test.ts')).map((f) => relative(ROOT, f))
}

/**
 * Every test file tap runs by default (package.json "tap": test/**\/*.test.ts but test/replicas/
 * and the files the groups run).
 */
export function testFiles (): string[] {
  const grouped = new Set(groupedFiles())
  const out: string[] = []
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      const rel = relative(ROOT, path)
      if (entry.isDirectory()) {
        if (!['test/fixtures', 'test/replicas'].includes(rel)) visit(path)
      } else if (entry.name.endsWith('.test.ts') && !entry.name.startsWith('_') && !grouped.has(rel)) {
        out.push(rel)
      }
    }
  }
  visit(join(ROOT, 'test'))
  return out.sort()
}

const IMPORT = /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm

/** The project files `file` imports (relative specifiers; `.js` names the `.ts` source). */
function importsOf (file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(IMPORT)].map((m) => resolve(dirname(file), (m[1] ?? m[2] ?? m[3]) as string).replace(/\.js$/, '.ts'))
}

/** Whether `file` reaches test/helper.ts through its imports. */
export function reachesHelper (file: string, seen = new Set<string>()): boolean {
  if (file === HELPER) return true
  if (seen.has(file)) return false
  seen.add(file)
  let imports: string[]
  try {
    imports = importsOf(file)
  } catch {
    return false // not a TypeScript file of the project (a .mjs fixture, a JSON file)
  }
  return imports.some((next) => reachesHelper(next, seen))
}

/** Whether `file` (a group: one of its files) rests on what differs between Node lines. */
export function runtimeSensitive (file: string): boolean {
  const files = file.startsWith('test/groups/') ? groupMembers(file) : [file]
  return files.some((f) => RUNTIME_SENSITIVE.some((p) => f.startsWith(p)))
}

export function stageFiles (stage: string): string[] {
  if (stage === 'database') return testFiles().filter((f) => reachesHelper(join(ROOT, f)))
  // The runtime-sensitive files that use the test database already run under Node 24 in the PostgreSQL stage.
  if (stage === 'runtime') return testFiles().filter((f) => runtimeSensitive(f) && !reachesHelper(join(ROOT, f)))
  throw new Error(`unknown stage ${JSON.stringify(stage)}: database or runtime`)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(stageFiles(process.argv[2] ?? '').join('\n'))
  } catch (err) {
    console.error((err as Error).message)
    process.exit(2)
  }
}
