import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from '../support/file-test.js'
import { DataDirInUseError, LOCK_FILE, lockDataDir } from '../../src/db/data-dir-lock.js'

t.test('[D33] the lock holds this pid, refuses a second holder while alive, and is released', async (t) => {
  const dir = join(t.testdir(), 'data')
  const lock = lockDataDir(dir)
  t.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), `${process.pid}\n`)
  lock.release()
  t.equal(existsSync(join(dir, LOCK_FILE)), false)
  writeFileSync(join(dir, LOCK_FILE), '1\n') // pid 1 is always running
  t.throws(() => lockDataDir(dir), new DataDirInUseError(dir, 1))
})

t.test('[D33] a stale lock of a dead pid is taken over', async (t) => {
  const dir = t.testdir()
  writeFileSync(join(dir, LOCK_FILE), '2147483646\n')
  const lock = lockDataDir(dir)
  t.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), `${process.pid}\n`)
  lock.release()
})
