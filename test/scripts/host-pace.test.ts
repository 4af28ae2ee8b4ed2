import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from '../support/file-test.js'
// @ts-expect-error plain JavaScript run by .ci/run before the tests, with no declarations
import { measurePace } from '../../scripts/host-pace.mjs'
import { parsePace } from '../support/pace.js'

/** The tests' "never" bounds grow with the host's pace; TEST_PACE is read strictly. */

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

t.test('TEST_PACE: unset or empty is 1; a number from 1 to 20 is taken as given', async (t) => {
  t.equal(parsePace(undefined), 1)
  t.equal(parsePace(''), 1)
  t.equal(parsePace('  '), 1)
  t.equal(parsePace('1'), 1)
  t.equal(parsePace('2.5'), 2.5)
  t.equal(parsePace('20'), 20)
})

t.test('TEST_PACE: anything else is refused, saying what it allows', async (t) => {
  for (const value of ['abc', '0', '0.5', '-3', '21', 'Infinity', 'NaN', '2x', '1e9']) {
    t.throws(() => parsePace(value), { message: `TEST_PACE must be a number from 1 to 20, got ${JSON.stringify(value)}` }, value)
  }
})

t.test('a bound is multiplied by the pace of the process environment', async (t) => {
  const script = "import { paced } from './test/support/pace.ts'; console.log(paced(1000), paced(333))"
  const run = (pace: string): ReturnType<typeof spawnSync> => spawnSync(process.execPath, ['--import=./test/support/typescript.mjs', '--input-type=module', '-e', script], {
    cwd: ROOT, env: { PATH: process.env.PATH ?? '', TEST_PACE: pace }, encoding: 'utf8'
  })
  const slow = run('2.5')
  t.equal(slow.stdout, '2500 833\n', String(slow.stderr))
  const usual = run('')
  t.equal(usual.stdout, '1000 333\n', String(usual.stderr))
  const wrong = run('fast')
  t.not(wrong.status, 0)
  t.match(String(wrong.stderr), 'TEST_PACE must be a number from 1 to 20, got "fast"')
})

t.test('the measured pace is a number from 1 to 20 with one decimal', async (t) => {
  const pace = measurePace(1) as number
  t.ok(pace >= 1 && pace <= 20, String(pace))
  t.equal(Math.round(pace * 10), pace * 10, 'one decimal')
})
