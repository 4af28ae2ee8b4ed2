/**
 * `npm start`'s build step: compiles only what changed since the last build, so a start with no
 * source change goes straight to the server. Two parts, each with its inputs hashed into a stamp
 * in dist/ once it is built:
 *
 *   the server   tsc -p scripts/tsconfig.build.json (incremental) from src/, scripts/, the tsconfigs
 *   admin page   scripts/build-admin-page.ts from src/admin/page/ and openapi.yaml (D55)
 *
 * package-lock.json is an input of both. `npm run build` still builds everything (the image does)
 * and then records both stamps (`--stamp`, its postbuild step), so the next start builds nothing.
 * Plain JavaScript, so the check itself costs no TypeScript loader: it runs at every start.
 *
 * One build at a time: the tests that start the server from dist/ run this from several test
 * processes at once (test/support/dist.ts), and two compilers writing the same folder break each
 * other, so the check and the build happen under a lock directory; a second run waits for the
 * first and then finds dist/ up to date.
 */
/* global process, console, URL */ // plain JavaScript for Node: no TypeScript types to declare them
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DIST = join(ROOT, 'dist')
const PAGE = join(ROOT, 'src', 'admin', 'page')
// Written by the admin page's build itself, from openapi.yaml (an input already).
const GENERATED_BY_BUILD = join(ROOT, 'src', 'generated', 'admin-api.d.ts')

/** Every file under `dir` (recursively), skipping the folders `skip` names. */
function filesUnder (dir, skip = []) {
  const out = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (skip.includes(path) || path === GENERATED_BY_BUILD) continue
    if (entry.isDirectory()) out.push(...filesUnder(path, skip))
    else out.push(path)
  }
  return out
}

function hashOf (files) {
  const hash = createHash('sha256')
  for (const file of files.sort()) hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0')
  return hash.digest('hex')
}

const parts = [
  {
    name: 'server',
    stamp: join(DIST, '.server-inputs'),
    output: join(DIST, 'src', 'server.js'),
    inputs: () => [
      ...filesUnder(join(ROOT, 'src'), [PAGE]),
      ...filesUnder(join(ROOT, 'scripts'), [join(ROOT, 'scripts', 'sample')]).filter((f) => f.endsWith('.ts')),
      join(ROOT, 'tsconfig.json'), join(ROOT, 'scripts', 'tsconfig.build.json'), join(ROOT, 'package-lock.json')
    ],
    command: [process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'scripts', 'tsconfig.build.json')]]
  },
  {
    name: 'admin page',
    stamp: join(DIST, '.admin-page-inputs'),
    output: join(DIST, 'admin', 'admin.js'),
    inputs: () => [...filesUnder(PAGE), join(ROOT, 'openapi.yaml'), join(ROOT, 'scripts', 'build-admin-page.ts'), join(ROOT, 'package-lock.json')],
    command: [process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'build-admin-page.ts')]]
  }
]

const LOCK = join(DIST, '.build-lock')
/** A lock older than this was left by a killed build: a whole build takes well under it. */
const STALE_LOCK_MS = 10 * 60_000

function takeLock () {
  mkdirSync(DIST, { recursive: true })
  for (;;) {
    try {
      mkdirSync(LOCK)
      return
    } catch (err) {
      if (err.code !== 'EEXIST') throw err
    }
    let age = 0
    try { age = Date.now() - statSync(LOCK).mtimeMs } catch { continue }
    if (age > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true })
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100) // another build runs: wait for it
  }
}

const stampOnly = process.argv.includes('--stamp')
let built = false
takeLock()
process.on('exit', () => { rmSync(LOCK, { recursive: true, force: true }) })
for (const part of parts) {
  // Hashed before building: a file edited during the build makes the next start build again.
  const hash = hashOf(part.inputs())
  if (stampOnly) {
    if (existsSync(part.output)) writeFileSync(part.stamp, `${hash}\n`)
    continue
  }
  const stamp = existsSync(part.stamp) ? readFileSync(part.stamp, 'utf8').trim() : ''
  if (stamp === hash && existsSync(part.output)) continue
  console.log(`build: ${part.name} (${stamp === '' ? 'not built yet' : 'sources changed'})`)
  const [command, args] = part.command
  const run = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' })
  if (run.status !== 0) process.exit(run.status ?? 1)
  mkdirSync(DIST, { recursive: true })
  writeFileSync(part.stamp, `${hash}\n`)
  built = true
}
if (!built && !stampOnly) console.log('build: dist/ is up to date')
