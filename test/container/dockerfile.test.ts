import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { join, posix, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from '../support/file-test.js'
import { paced } from '../support/pace.js'

/**
 * No Docker engine runs here, so the image is checked by what can be checked without one: the
 * Dockerfile parsed; its build stage replayed from a copy of exactly what it COPYs (after
 * .dockerignore) with the TypeScript compiler; and the runtime stage's paths, user, health
 * check and command compared with the repository and package.json.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// The build stage's context, copied and built by one test and reused by the next.
const builtDir = mkdtempSync(join(tmpdir(), 'docker-build-'))
t.teardown(() => rmSync(builtDir, { recursive: true, force: true }))
const builtContext = join(builtDir, 'app')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}

interface Instruction { op: string, args: string, line: number }
interface Stage { name: string | undefined, from: string, instructions: Instruction[] }

/** Stages of a Dockerfile: comments dropped, `\` continuations joined. */
function parseDockerfile (text: string): Stage[] {
  const stages: Stage[] = []
  let pending = ''
  let start = 0
  text.split('\n').forEach((raw, i) => {
    const line = raw.trimEnd()
    if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) return
    if (pending === '') start = i + 1
    if (line.endsWith('\\')) { pending += line.slice(0, -1) + ' '; return }
    const full = (pending + line).trim()
    pending = ''
    const [, op = '', args = ''] = /^(\S+)\s*(.*)$/.exec(full) ?? []
    const instruction = { op: op.toUpperCase(), args, line: start }
    if (instruction.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args)
      stages.push({ from: m?.[1] ?? args, name: m?.[2], instructions: [] })
    } else {
      stages.at(-1)?.instructions.push(instruction)
    }
  })
  return stages
}

interface Copy { from: string | undefined, sources: string[], dest: string, line: number }
function copiesOf (stage: Stage): Copy[] {
  return stage.instructions.filter((i) => i.op === 'COPY').map((i) => {
    const words = i.args.split(/\s+/)
    const flags = words.filter((w) => w.startsWith('--'))
    const paths = words.filter((w) => !w.startsWith('--'))
    const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length)
    return { from, sources: paths.slice(0, -1), dest: paths.at(-1) as string, line: i.line }
  })
}

/** .dockerignore semantics: root-relative patterns, `*`, `**`, `!` re-includes; last match wins. */
function dockerIgnore (text: string): (path: string) => boolean {
  const rules = text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#')).map((l) => {
    const negate = l.startsWith('!')
    const pattern = posix.normalize((negate ? l.slice(1) : l).replace(/^\/+/, ''))
    const source = pattern.split('**').map((part) => part.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')).join('.*')
    return { negate, regex: new RegExp(`^${source}(/.*)?$`) }
  })
  return (path) => {
    let ignored = false
    for (const rule of rules) if (rule.regex.test(path)) ignored = !rule.negate
    return ignored
  }
}

const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
const runtime = stages.at(-1) as Stage
const ignored = dockerIgnore(readFileSync(join(ROOT, '.dockerignore'), 'utf8'))
const stageNamed = (name: string): Stage | undefined => stages.find((s) => s.name === name)
const workdir = (stage: Stage): string => stage.instructions.filter((i) => i.op === 'WORKDIR').at(-1)?.args ?? '/'

// A cold build of the service and the admin page in a copied context takes minutes on a busy 2-core machine.
t.setTimeout(paced(360_000))

t.test('[D53] every stage runs the current Node LTS line; engines keeps Node 20.19+ working', async (t) => {
  t.strictSame(stages.map((s) => s.from), ['node:24-bookworm-slim', 'node:24-bookworm-slim', 'node:24-bookworm-slim'])
  const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines
  t.strictSame(engines, { node: '>=20.19' }, 'a floor, not a pin: development machines on Node 20 keep working')
  t.match(readFileSync(join(ROOT, '.ci/run'), 'utf8'), /^LTS_NODE=24$/m, 'CI tests on the image\'s line too')
})

t.test('multi-stage: build, production dependencies (npm ci --omit=dev), runtime', async (t) => {
  t.ok(stages.length >= 2, `${stages.length} stages`)
  const runs = stages.flatMap((s) => s.instructions.filter((i) => i.op === 'RUN').map((i) => `${s.name ?? 'runtime'}: ${i.args}`))
  t.ok(runs.some((r) => /npm ci\b.*--omit=dev/.test(r)), 'a stage installs production dependencies only')
  const copies = copiesOf(runtime)
  for (const copy of copies.filter((c) => c.from !== undefined)) {
    t.ok(stageNamed(copy.from as string), `COPY --from=${String(copy.from)} names a stage (line ${copy.line})`)
  }
  const modules = copies.find((c) => c.sources.some((s) => s.endsWith('/node_modules')))
  t.ok(modules !== undefined, 'the runtime gets node_modules from another stage')
  const depsStage = stageNamed(modules?.from ?? '')
  t.ok(depsStage?.instructions.some((i) => i.op === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args)), 'and that stage installed them with --omit=dev')
  t.notOk(runtime.instructions.some((i) => i.op === 'RUN' && /npm (ci|install)/.test(i.args)), 'no install in the runtime stage')
})

t.test('.dockerignore keeps local, generated and secret files out of the context', async (t) => {
  for (const path of ['node_modules', 'node_modules/fastify/package.json', 'dist/src/server.js', 'data/pg', '.git/HEAD', 'coverage/x', '.tap/report', '.env', '.env.production']) {
    t.ok(ignored(path), `${path} is not sent`)
  }
  for (const path of ['.env.example', 'package.json', 'src/server.ts', 'drizzle/meta/_journal.json', 'openapi.yaml']) t.notOk(ignored(path), `${path} is sent`)
})

t.test('every path COPYed from the context exists and is not ignored', async (t) => {
  const fromContext = stages.flatMap((s) => copiesOf(s).filter((c) => c.from === undefined))
  t.ok(fromContext.length > 0)
  for (const copy of fromContext) {
    for (const source of copy.sources) {
      t.ok(existsSync(join(ROOT, source)), `${source} exists (line ${copy.line})`)
      t.notOk(ignored(posix.normalize(source)), `${source} is in the build context (line ${copy.line})`)
    }
  }
})

t.test('package-lock.json agrees with package.json, as npm ci requires', async (t) => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dependencies?: object, devDependencies?: object }> }
  t.same(lock.packages['']?.dependencies ?? {}, pkg.dependencies)
  t.same(lock.packages['']?.devDependencies ?? {}, pkg.devDependencies)
})

t.test('the runtime: non-root user, HEALTHCHECK on /v1/health, CMD = npm start without its build', async (t) => {
  const user = runtime.instructions.filter((i) => i.op === 'USER').at(-1)?.args
  t.ok(user !== undefined && !/^(root|0)(:|$)/.test(user), `USER ${String(user)}`)
  const health = runtime.instructions.find((i) => i.op === 'HEALTHCHECK')?.args ?? ''
  t.match(health, /\bCMD\b.*\/v1\/health/)
  t.match(health, /--timeout=\d+s/)
  const cmd = runtime.instructions.filter((i) => i.op === 'CMD').at(-1)?.args ?? ''
  t.same(JSON.parse(cmd), pkg.scripts.start?.replace(/^exec /, '').split(' '), 'exec form, the same command as scripts.start')
  // D47: npm start execs node, so a SIGTERM sent to npm reaches the server.
  t.equal(pkg.scripts.start, 'exec node --max-semi-space-size=4 --heap-growing-percent=20 dist/src/server.js')
  t.equal(pkg.scripts.prestart, 'node scripts/build-if-stale.mjs', 'npm start builds what changed first; the image has built already')
})

t.test('the build stage, replayed from its own context, gives the runtime every path it needs', async (t) => {
  const build = stageNamed('build') as Stage
  t.ok(build, 'a stage named build')
  const app = builtContext
  // COPY exactly what the build stage copies, minus what .dockerignore keeps out.
  for (const copy of copiesOf(build).filter((c) => c.from === undefined)) {
    for (const source of copy.sources) {
      const target = copy.dest.endsWith('/') || copy.sources.length > 1 ? join(app, copy.dest, posix.basename(source)) : join(app, copy.dest)
      cpSync(join(ROOT, source), target, { recursive: true, filter: (src) => !ignored(relative(ROOT, src)) || src === ROOT })
    }
  }
  t.ok(build.instructions.some((i) => i.op === 'RUN' && i.args === 'npm run build'), 'RUN npm run build')
  symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'), 'dir') // what `npm ci` installs
  // The build script itself (the service's tsc, then the admin page, D55), in the copied context.
  t.match(pkg.scripts.build as string, /^tsc -p \S+ && tsx scripts\/build-admin-page\.ts$/)
  const { stderr, stdout } = await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: app, timeout: paced(240_000) })
    .catch((err: { stdout: string, stderr: string }) => err)
  t.equal(stdout + stderr, '', 'the build context builds without errors')
  t.ok(existsSync(join(app, 'dist', 'admin', 'admin.js')), 'the admin page is built')

  // Each COPY --from=build of the runtime stage names a path the build produced.
  const buildDir = workdir(build)
  for (const copy of copiesOf(runtime).filter((c) => c.from === 'build')) {
    for (const source of copy.sources) {
      t.ok(existsSync(join(app, posix.relative(buildDir, source))), `${source} exists after the build (line ${copy.line})`)
    }
  }
  const cmd = JSON.parse(runtime.instructions.filter((i) => i.op === 'CMD').at(-1)?.args ?? '[]') as string[]
  const entry = cmd.slice(1).find((arg) => !arg.startsWith('--')) as string // past node's own flags
  t.ok(existsSync(join(app, entry)), `${entry} exists`)

  // What the server reads at run time beside its code is copied into the runtime stage.
  const runtimeSources = copiesOf(runtime).flatMap((c) => c.sources.map((s) => posix.basename(s)))
  for (const needed of ['package.json', 'openapi.yaml', 'drizzle']) t.ok(runtimeSources.includes(needed), `runtime has ${needed}`)

  // Every package the compiled service imports is a production dependency (npm ci --omit=dev).
  const imported = new Set<string>()
  const visit = (path: string): void => {
    if (statSync(path).isDirectory()) { for (const entry of readdirSync(path)) visit(join(path, entry)); return }
    if (!path.endsWith('.js')) return
    // import/export … from '…' (possibly over several lines), import '…', import('…')
    const statements = /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm
    for (const m of readFileSync(path, 'utf8').matchAll(statements)) {
      const spec = (m[1] ?? m[2] ?? m[3]) as string
      if (spec.startsWith('.') || spec.startsWith('node:') || builtinModules.includes(spec)) continue
      imported.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0] as string)
    }
  }
  visit(join(app, 'dist', 'src'))
  for (const name of ['fastify', 'drizzle-orm', '@fastify/swagger-ui', 'prom-client']) t.ok(imported.has(name), `the scan sees ${name}`)
  t.same([...imported].filter((name) => pkg.dependencies[name] === undefined).sort(), [], 'no import needs a dev dependency')
})

t.test('[D67] npm start\'s build step, in the built context: nothing when nothing changed; a changed server file recompiles the server alone', async (t) => {
  const buildIfStale = async (): Promise<string> => {
    // SIGKILL on timeout: a build step blocked waiting for its lock does not run a SIGTERM handler,
    // and one was found alive 98 minutes after its test had timed out.
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: builtContext, timeout: paced(240_000), killSignal: 'SIGKILL' })
    return stdout + stderr
  }
  t.ok(existsSync(join(builtContext, 'dist', '.server-inputs')) && existsSync(join(builtContext, 'dist', '.admin-page-inputs')), 'npm run build recorded what it built')
  t.equal(await buildIfStale(), 'build: dist/ is up to date\n', 'a start after npm run build compiles nothing')
  // The entry point, which no other file imports: tsc checks it alone again (half the CPU of a change to config.ts).
  const entry = join(builtContext, 'src', 'server.ts')
  writeFileSync(entry, readFileSync(entry, 'utf8') + 'export const BUILD_PROBE = 1\n')
  t.equal(await buildIfStale(), 'build: server (sources changed)\n', 'the server is recompiled, the admin page is not')
  t.match(readFileSync(join(builtContext, 'dist', 'src', 'server.js'), 'utf8'), /BUILD_PROBE = 1/, 'with the change')
  t.equal(await buildIfStale(), 'build: dist/ is up to date\n', 'and the next start compiles nothing again')
})
