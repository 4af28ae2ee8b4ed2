import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from '../support/file-test.js'

/**
 * .ci/failed-tests.awk turns a tap log into the closing list of `.ci/run`: every failed test and
 * assertion at any depth, where it is, and an assertion's diff. CI keeps only the end of its
 * output, so a failure deep in a file (a browser test's third subtest) must be named there.
 * The log here is tap's own, from a real failing run, so a change of tap's format fails this test.
 */
const AWK = new URL('../../.ci/failed-tests.awk', import.meta.url).pathname
const listFailures = (log: string): string => execFileSync('awk', ['-f', AWK], { input: log, encoding: 'utf8' })

t.test('a failing run: each failure named with its file and line, the assertion with its diff', async (t) => {
  const file = join(t.testdir(), 'failing.mjs')
  const tap = pathToFileURL(createRequire(import.meta.url).resolve('tap')).href
  writeFileSync(file, [
    `import t from '${tap}'`,
    "t.test('outer', async (t) => {",
    "  t.test('inner', async (t) => {",
    "    t.equal(1, 2, 'one is two')",
    '    t.ok(true)',
    '  })',
    "  t.test('throws', async () => { throw new Error('locator.waitFor: Timeout 20000ms exceeded') })",
    '})',
    "t.test('passes', async (t) => { t.ok(true) })",
    ''
  ].join('\n'))
  let log = ''
  try {
    execFileSync(process.execPath, [file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (err) {
    log = (err as { stdout: string }).stdout
  }
  t.match(log, /^ {8}not ok 1 - one is two$/m, 'tap failed it, two subtests deep')
  // tap names the file from the working directory when it is near, absolutely otherwise: the
  // name alone is compared.
  const listed = listFailures(log).replace(/ # time=[\d.]+ms/g, '').replace(/[^\s(]*failing\.mjs/g, 'failing.mjs')
  t.equal(listed, [
    'not ok 1 - one is two  (failing.mjs:4)',
    '      -2',
    '      +1',
    'not ok 1 - inner  (failing.mjs:3)',
    'not ok 1 - locator.waitFor: Timeout 20000ms exceeded  (failing.mjs:7)',
    'not ok 2 - throws  (failing.mjs:7)',
    'not ok 1 - outer  (failing.mjs:2)',
    ''
  ].join('\n'))
})

t.test('a passing log lists nothing', async (t) => {
  t.equal(listFailures('TAP version 14\n# Subtest: a\n    ok 1 - fine\n    1..1\nok 1 - a # time=1ms\n1..1\n'), '')
})
