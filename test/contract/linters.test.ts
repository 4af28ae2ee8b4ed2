import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from '../support/file-test.js'
import { paced } from '../support/pace.js'
import { parse } from 'yaml'
import { projectRoot } from '../../src/project-root.js'

/**
 * `npm run contract`'s two linters: openapi.yaml passes Redocly (recommended rules, strict) and
 * Spectral (spectral:oas), and Redocly bites when a public operation loses its `security: []`.
 * The linters run as `npm run contract:redocly` / `contract:spectral` run them (the arguments are
 * read from package.json), once each on the real document and once on a broken copy.
 */

const root = projectRoot()
const run = promisify(execFile)
const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<string, string>
const read = (name: string): string => readFileSync(join(root, name), 'utf8')

/** A package.json script as [binary in node_modules/.bin, arguments]; leading VAR=value dropped. */
function command (script: string): [string, string[]] {
  const words = (scripts[script] ?? '').split(/\s+/).filter((w) => w !== '' && !/^[A-Z_]+=/.test(w))
  const [bin, ...args] = words
  if (bin === undefined || args.some((a) => /[&|;<>'"$]/.test(a))) throw new Error(`cannot run script ${script} directly: ${scripts[script]}`)
  return [join(root, 'node_modules', '.bin', bin), args]
}

interface Outcome { code: number, stdout: string, stderr: string }

async function lint (script: string, cwd: string, extra: string[] = []): Promise<Outcome> {
  const [bin, args] = command(script)
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' }
  try {
    const { stdout, stderr } = await run(bin, [...args, ...extra], { cwd, env, timeout: paced(60_000) })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: unknown, stdout?: string, stderr?: string }
    if (typeof e.code !== 'number') throw err // not an exit status: the linter did not run
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
  }
}

interface RedoclyReport {
  totals: { errors: number, warnings: number, ignored: number }
  problems: Array<{ ruleId: string, severity: string, ignored?: boolean, location: Array<{ pointer: string }> }>
}

const PUBLIC_OPERATION = '      operationId: getHealth\n      tags: [health]\n      security: [] # public: no authentication\n'
const original = read('openapi.yaml')
const ignoreFile = read('.redocly.lint-ignore.yaml')
const exceptions = Object.values(parse(ignoreFile) as Record<string, Record<string, string[]>>)
  .flatMap((rules) => Object.values(rules)).flat().length

t.test('the linters of npm run contract', async (t) => {
  if (!original.includes(PUBLIC_OPERATION)) throw new Error('openapi.yaml no longer has the getHealth lines this test edits')
  const broken = t.testdir({
    'openapi.yaml': original.replace(PUBLIC_OPERATION, '      operationId: getHealth\n      tags: [health]\n'),
    'redocly.yaml': read('redocly.yaml'),
    '.redocly.lint-ignore.yaml': ignoreFile
  })

  const [redocly, redoclyBroken, spectral] = await Promise.all([
    lint('contract:redocly', root, ['--format=json']),
    lint('contract:redocly', broken, ['--format=json']),
    lint('contract:spectral', root)
  ])

  t.test('Redocly: openapi.yaml passes, with only the exceptions of .redocly.lint-ignore.yaml', async (t) => {
    t.equal(redocly.code, 0, 'redocly lint exits 0', { output: redocly.stdout + redocly.stderr })
    const report = JSON.parse(redocly.stdout) as RedoclyReport
    t.same(report.totals, { errors: 0, warnings: 0, ignored: exceptions }, 'every listed exception is still needed, and no other problem is ignored')
  })

  t.test('Redocly: a public operation without security: [] fails it', async (t) => {
    t.not(redoclyBroken.code, 0, 'redocly lint exits non-zero', { output: redoclyBroken.stdout + redoclyBroken.stderr })
    const report = JSON.parse(redoclyBroken.stdout) as RedoclyReport
    const problems = report.problems.filter((p) => p.ignored !== true)
    t.same(problems.map((p) => [p.ruleId, p.severity, p.location[0]?.pointer]), [
      ['security-defined', 'error', '#/paths/~1v1~1health/get']
    ], 'for exactly that reason, at that operation')
  })

  t.test('Spectral (spectral:oas): openapi.yaml passes with no error or warning', async (t) => {
    t.equal(spectral.code, 0, 'spectral lint --fail-severity=warn exits 0', { output: spectral.stdout + spectral.stderr })
    t.match(spectral.stdout, /No results with a severity of 'warn' or higher found/, 'and reports no result')
  })
})
