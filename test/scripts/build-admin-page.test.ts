import { spawnSync } from 'node:child_process'
import { openSync, closeSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from '../support/file-test.js'
import { builtDist } from '../support/dist.js'

/**
 * The admin page's build replaces each file it writes in one step (written aside, then renamed),
 * so a server sending the page while it builds (another test process, CI's other lane, a
 * developer's running service) sends the old file or the new one, never an empty or half-written
 * script. Written in place, a reader that had opened the old file sees it truncated; here it still
 * reads every byte of the old one.
 */
const ROOT = new URL('../..', import.meta.url).pathname
const OUTPUTS = ['dist/admin/admin.js', 'dist/admin/index.html', 'dist/admin/admin.css', 'src/generated/admin-api.d.ts']

t.test('a rebuild replaces every file whole: a reader of the old file keeps all of it', async (t) => {
  await builtDist()
  const before = OUTPUTS.map((path) => {
    const file = join(ROOT, path)
    return { path, inode: statSync(file).ino, bytes: readFileSync(file), fd: openSync(file, 'r') }
  })
  t.teardown(() => { for (const { fd } of before) closeSync(fd) })

  const run = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/build-admin-page.ts')], { cwd: ROOT, encoding: 'utf8' })
  t.equal(run.status, 0, run.stderr)

  for (const { path, inode, bytes, fd } of before) {
    const file = join(ROOT, path)
    t.not(statSync(file).ino, inode, `${path}: a new file, not the old one rewritten`)
    const kept = Buffer.alloc(bytes.length + 1)
    t.equal(readSync(fd, kept, 0, kept.length, 0), bytes.length, `${path}: the old file, still open, is whole`)
    t.ok(kept.subarray(0, bytes.length).equals(bytes), `${path}: and unchanged`)
    t.ok(readFileSync(file).equals(bytes), `${path}: the same sources build the same file`)
  }
  t.strictSame(readdirSync(join(ROOT, 'dist')).filter((name) => name.startsWith('.admin-build-')), [], 'no staging folder left')
  t.strictSame(readdirSync(join(ROOT, 'src/generated')).filter((name) => name.endsWith('.tmp')), [], 'no file left aside')
})
