import { readdirSync, readFileSync } from 'node:fs'
import { sql } from 'drizzle-orm'
import { groupedFiles, groupMembers, testFiles } from '../../scripts/test-files.js'
import { testDatabase } from '../helper.js'
import type { CountingDatabase } from '../support/counting-database.js'
import t, { currentFileTest, runFiles } from '../support/file-test.js'

/**
 * test/groups/ runs several test files in one process (Node, tap and the app are loaded once).
 * Each file must still behave as it does alone: its hooks, teardowns and database are its own.
 */
const ROOT = new URL('../..', import.meta.url).pathname
const GROUPS = readdirSync(new URL('../groups/', import.meta.url)).filter((f) => f.endsWith('.test.ts')).map((f) => `test/groups/${f}`).sort()

t.test('package.json\'s tap exclude names exactly the files the groups run, each in one group', async (t) => {
  const members = GROUPS.flatMap((g) => groupMembers(g))
  t.ok(GROUPS.length >= 2, `${GROUPS.length} groups`)
  t.same([...members].sort(), groupedFiles(), 'a file excluded but in no group would never run; one in a group but not excluded would run twice')
  t.equal(new Set(members).size, members.length, 'no file in two groups')
  for (const group of GROUPS) t.notOk(testFiles().some((f) => groupMembers(group).includes(f)), `${group}: none of its files runs on its own too`)
})

t.test('every test file takes its t from test/support/file-test.ts, never tap\'s root (which a group would share)', async (t) => {
  const files = (function walk (dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? walk(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [])
  })(`${ROOT}test`).filter((f) => !f.includes('/test/support/') && !f.includes('/fixtures/'))
  t.ok(files.length > 100, `${files.length} files`)
  t.same(files.filter((f) => /^import (?!type )[^\n]*from 'tap'/m.test(readFileSync(f, 'utf8'))).map((f) => f.slice(ROOT.length)), [])
})

t.test('each entry of a group is named after the file it imports', async (t) => {
  for (const group of GROUPS) {
    const entries = [...readFileSync(`${ROOT}/${group}`, 'utf8').matchAll(/^ {2}'([^']+)': async \(\) => await import\('\.\.\/([^']+)\.js'\)/gm)]
    t.same(entries.map((m) => m[1]), groupMembers(group), group)
    t.same(entries.map((m) => `test/${m[2] as string}.ts`), groupMembers(group), group)
  }
})

// Two files run as a group would run them, then checked from a third test of this file.
const seen: string[] = []
const databases: CountingDatabase[] = []
runFiles({
  first: async () => {
    t.beforeEach(() => { seen.push('first: its beforeEach') })
    t.teardown(() => { seen.push('first: its teardown') })
    t.test('a test of the first file', async () => {
      seen.push('first: its test')
      databases.push(await testDatabase())
    })
  },
  second: async () => {
    t.test('a test of the second file', async () => {
      seen.push('second: its test')
      databases.push(await testDatabase())
    })
  }
})

t.test('in a group, a file\'s hooks and teardowns stay with its own tests, and its database ends with it', async (t) => {
  t.same(seen, ['first: its beforeEach', 'first: its test', 'first: its teardown', 'second: its test'])
  const [first, second] = databases
  t.not(first, second, 'a database of its own for each file')
  t.equal(currentFileTest().parent, undefined, 'once a file of the group has ended, tap\'s root (no parent) again')
  await t.rejects(first?.db.execute(sql`select 1`) as Promise<unknown>, 'the first file\'s database was closed when that file ended')
})
