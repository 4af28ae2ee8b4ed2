/**
 * The module hooks of test/support/typescript.mjs: a `.js` specifier of a TypeScript file resolves
 * to its `.ts` file, and a `.ts` file loads as its TypeScript-free JavaScript. Nothing else is
 * looked at, so the hundreds of node_modules files a test imports pass straight to Node's own
 * resolution and loading.
 */
/* global process, URL */ // plain JavaScript for Node: no TypeScript types to declare them
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import module, { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { types } from 'node:util'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CACHE = join(ROOT, 'node_modules', '.cache', 'fuel-price-service', 'typescript')
const require = createRequire(import.meta.url)
const TYPESCRIPT_VERSION = JSON.parse(readFileSync(require.resolve('typescript/package.json'), 'utf8')).version

function isFile (path) {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/**
 * On Node 20 every module an ES import loads crosses to the hooks' thread and back, twice under
 * tap (its process-info hook and this one): TypeBox's ES build is 247 files and drizzle-orm's
 * 111, more than half of what a test file that builds the app imports. Their CommonJS builds (the
 * same code, compiled by their authors for `require`) load the files behind the entry with
 * `require`, which the hooks never see (test/README.md has what it saves). Where the hooks run in
 * the loading thread (Node 22.15+) that round trip is gone, and so is this.
 */
const OFF_THREAD = typeof module.registerHooks !== 'function'
const COMMONJS_HERE = /^(@sinclair\/typebox|drizzle-orm)(\/|$)/

/** The hooks are synchronous at heart, so that Node 22.15+ can run them in the loading thread
 * (`module.registerHooks`, test/support/typescript.mjs); `resolve` and `load` below are the same
 * for Node 20's off-thread `register`, where `next` answers a promise. */
export function resolveSync (specifier, context, next) {
  // A package's CommonJS entry loads through require (requiredModule, below), TypeBox and drizzle-orm in their CommonJS builds.
  if (OFF_THREAD && !/^(\.|\/|#|node:|file:)/.test(specifier)) {
    const conditions = COMMONJS_HERE.test(specifier) ? context.conditions.map((c) => c === 'import' ? 'require' : c) : context.conditions
    const resolved = next(specifier, { ...context, conditions })
    return typeof resolved.then === 'function' ? resolved.then(asRequired) : asRequired(resolved)
  }
  // TypeScript's NodeNext style: `./x.js` in a .ts file names ./x.ts
  const relative = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:')
  if (specifier.endsWith('.js') && relative && context.parentURL?.startsWith('file:') && context.parentURL.endsWith('.ts')) {
    const url = new URL(specifier, context.parentURL)
    const ts = new URL(url.href.slice(0, -3) + '.ts')
    if (!isFile(fileURLToPath(url)) && isFile(fileURLToPath(ts))) return { url: ts.href, format: 'module', shortCircuit: true }
  }
  return next(specifier, context)
}

export async function resolve (specifier, context, next) {
  return await resolveSync(specifier, context, next)
}

// TypeScript's own option names, as in tsconfig.json: ES2022 output as `tsc` writes it (class
// fields defined, types erased file by file), with the source inside the map for stack traces
// and the coverage report.
const OPTIONS = { module: 'ESNext', target: 'ES2022', isolatedModules: true, sourceMap: false, inlineSourceMap: true, inlineSources: true }
let compiler

/**
 * Node gives an ES import of a CommonJS file its named exports by scanning the file's text, and
 * follows every re-export it finds (TypeBox's and drizzle-orm's entries re-export their whole
 * trees): hundreds of files read and lexed that `require` then loads anyway. A package's CommonJS
 * entry loads instead as a small ES module that requires it and exports the names it has
 * (importing the app: 1.0-1.1 s of CPU against 1.5-1.7 s; test/README.md).
 */
const REQUIRED = '?required'

function asRequired (resolved) {
  const { url, format } = resolved
  // Without a "type", Node 20.19+ tells a .js file's kind only when it loads it (format null here).
  const commonjs = format === 'commonjs' || (format == null && /\.c?js$/.test(url))
  if (!commonjs || !url.startsWith('file:') || exportNames(fileURLToPath(url)) === null) return resolved
  return { url: url + REQUIRED, format: 'module', shortCircuit: true }
}

function requiredModule (path) {
  const names = exportNames(path)
  const bindings = names.map((name, i) => `const e${i} = m[${JSON.stringify(name)}]`).join('\n')
  const list = names.map((name, i) => `e${i} as ${JSON.stringify(name)}`).join(', ')
  return `import { createRequire } from 'node:module'\nconst m = createRequire(import.meta.url)(${JSON.stringify(path)})\nexport default m\n${bindings}\nexport { ${list} }\n`
}

// The names of an entry's exports, found by requiring it once (in this thread) and kept on disk by
// the file's path, size and time, so a reinstalled package is looked at again.
const EXPORTS_FILE = join(CACHE, '..', 'commonjs-exports.json')
let exportsKept

function exportNames (path) {
  const { size, mtimeMs } = statSync(path)
  const key = `${path}\0${size}\0${mtimeMs}`
  if (exportsKept === undefined) {
    try {
      exportsKept = JSON.parse(readFileSync(EXPORTS_FILE, 'utf8'))
    } catch {
      exportsKept = {}
    }
  }
  let names = exportsKept[key]
  if (names === undefined) {
    try {
      const value = require(path)
      // Node 20.19+ also requires an ES module, giving its namespace: that one loads as Node would.
      names = types.isModuleNamespaceObject(value) ? null : Object.keys(value).filter((name) => name !== 'default' && name !== '__esModule')
    } catch {
      names = null // an ES module without a "type", or one that fails here: Node loads it as it would
    }
    exportsKept[key] = names
    mkdirSync(CACHE, { recursive: true })
    const partial = `${EXPORTS_FILE}.${process.pid}.partial`
    writeFileSync(partial, JSON.stringify(exportsKept))
    renameSync(partial, EXPORTS_FILE)
  }
  return names
}

export function loadSync (url, context, next) {
  if (url.endsWith(REQUIRED)) return { format: 'module', source: requiredModule(fileURLToPath(url.slice(0, -REQUIRED.length))), shortCircuit: true }
  if (!url.startsWith('file:') || !url.endsWith('.ts') || url.endsWith('.d.ts')) return next(url, context)
  return { format: 'module', source: compiled(fileURLToPath(url)), shortCircuit: true }
}

/** A `.ts` file's JavaScript from the cache, compiled and kept there first when its text is new. */
function compiled (path) {
  const text = readFileSync(path, 'utf8')
  const cached = cacheFile(path, text)
  try {
    return readFileSync(cached, 'utf8')
  } catch {
    return compileInto(cached, path, text)
  }
}

/**
 * Compiles ahead the files among `paths` the cache lacks, in this one process (tap's before
 * script): a fresh checkout's parallel test processes would otherwise each load TypeScript and
 * compile the same files. Returns how many it compiled.
 */
export function compileAhead (paths) {
  let count = 0
  for (const path of paths) {
    const text = readFileSync(path, 'utf8')
    const cached = cacheFile(path, text)
    if (existsSync(cached)) continue
    compileInto(cached, path, text)
    count++
  }
  return count
}

// Keyed by the compiler's version and options and the file's path and text: an edit makes a new entry.
function cacheFile (path, text) {
  const key = createHash('sha256').update(`${TYPESCRIPT_VERSION}\0${JSON.stringify(OPTIONS)}\0${path}\0`).update(text).digest('hex').slice(0, 32)
  return join(CACHE, `${key}.js`)
}

function compileInto (cached, path, text) {
  compiler ??= require('typescript') // loaded only for a file not seen before: half a second
  const source = compiler.transpileModule(text, { fileName: path, compilerOptions: OPTIONS }).outputText
  mkdirSync(CACHE, { recursive: true })
  const partial = `${cached}.${process.pid}.partial`
  writeFileSync(partial, source)
  renameSync(partial, cached) // whole or absent for a process reading it at the same time
  return source
}

export async function load (url, context, next) {
  return await loadSync(url, context, next)
}
