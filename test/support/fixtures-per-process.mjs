/**
 * tap names a test's directory (t.testdir()) after its file and test names alone, under
 * .tap/fixtures: two tap runs in one checkout at once (CI's lanes side by side, or a file run by
 * hand during npm test) would share one, and either run's testdir() or clean-up would empty it
 * under the other's running server. Each test process adds its pid to the names (tap's node-arg
 * in package.json); tap's `before` script removes the ones a killed process left behind.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import process from 'node:process'

// Test files only: a process a test starts with this process's flags (PGlite's initdb child) is not one.
if (/\.test\.[cm]?[jt]s$/.test(process.argv[1] ?? '')) {
  const { t } = await import('tap')
  t.testdirName = `${t.testdirName}-${process.pid}`
}

/**
 * Removes the test directories in `fixtures` whose process is gone (killed before its clean-up),
 * and any without a pid; a running process's stay.
 * @param {string} fixtures
 */
export function removeLeftBehind (fixtures) {
  for (const name of existsSync(fixtures) ? readdirSync(fixtures) : []) {
    const pid = /\.test\.[cm]?[jt]s-(\d+)(?:-|$)/.exec(name)?.[1]
    if (pid === undefined || !running(Number(pid))) rmSync(join(fixtures, name), { recursive: true, force: true })
  }
}

/**
 * Is the process `pid` still running? Another user's process counts as running; a zombie (ended,
 * not yet reaped by a parent that may never reap it) does not.
 * @param {number} pid
 */
export function running (pid) {
  try {
    process.kill(pid, 0)
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM' // another user's process: running
  }
  return !zombie(pid)
}

/**
 * The state field of /proc/<pid>/stat (after the parenthesised name) is Z for a zombie; without
 * /proc (not Linux) no process is taken for one.
 * @param {number} pid
 */
function zombie (pid) {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\)/, '').trimStart().startsWith('Z')
  } catch {
    return false
  }
}
