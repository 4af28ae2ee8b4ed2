import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from '../support/file-test.js'
import { backend, postgresOnly } from '../helper.js'

/**
 * The tests that need PostgreSQL as the test database are listed once: the files of
 * test/postgres/, each of whose tests takes `postgresOnly` (skipped with its reason on PGlite).
 * Elsewhere no test depends on the backend to be declared or to pass.
 */
const TEST_DIR = fileURLToPath(new URL('..', import.meta.url))

function testFiles (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : testFiles(path)
    return entry.name.endsWith('.test.ts') ? [path] : []
  })
}

const files = testFiles(TEST_DIR).map((path) => ({ name: relative(TEST_DIR, path), text: readFileSync(path, 'utf8') }))
const inFolder = files.filter((f) => f.name.startsWith('postgres/'))
const outside = files.filter((f) => !f.name.startsWith('postgres/') && f.name !== 'suite/postgres-list.test.ts')

t.test('every test of test/postgres/ takes postgresOnly', async (t) => {
  t.ok(inFolder.length >= 2, `test/postgres/ has ${inFolder.length} files`)
  for (const file of inFolder) {
    const declared = [...file.text.matchAll(/^t\.test\((.*)$/gm)].map((m) => m[1] as string)
    t.ok(declared.length > 0, `${file.name} declares tests`)
    t.same(declared.filter((line) => !/, postgresOnly, async \(t\) => \{$/.test(line)), [], `${file.name}: every top-level test takes postgresOnly`)
  }
})

t.test('no test elsewhere takes postgresOnly, declares itself by backend, or passes in place of a PostgreSQL check', async (t) => {
  t.same(outside.filter((f) => /\bpostgresOnly\b/.test(f.text)).map((f) => f.name), [], 'postgresOnly only in test/postgres/')
  t.same(outside.filter((f) => /if \(backend === '(postgres|pglite)'\) t\.test/.test(f.text)).map((f) => f.name), [], 'no test declared only on one backend')
  t.same(outside.filter((f) => /t\.pass\('PGlite/.test(f.text)).map((f) => f.name), [], 'no pass standing in for a PostgreSQL check')
})

t.test('postgresOnly: a skip with its reason on PGlite, nothing on PostgreSQL', async (t) => {
  t.same(postgresOnly, backend === 'pglite'
    ? { skip: 'PostgreSQL only: runs when TEST_DATABASE_URL is set (.ci/run\'s PostgreSQL stage)' }
    : { skip: false })
})
