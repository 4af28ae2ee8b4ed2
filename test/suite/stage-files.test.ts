import { join } from 'node:path'
import t from '../support/file-test.js'
import { formatTimes, readTimes } from '../../scripts/test-times.js'
import { reachesHelper, runtimeSensitive, stageFiles, testFiles } from '../../scripts/test-files.js'

/** scripts/test-files.ts picks each CI stage's files; scripts/test-times.ts reads a run's times. */
const ROOT = new URL('../..', import.meta.url).pathname

t.test('every test file tap runs, test/replicas/, fixtures and the files the groups run aside', async (t) => {
  const files = testFiles()
  t.ok(files.includes('test/groups/routes.test.ts'))
  t.notOk(files.includes('test/routes/prices.test.ts'), 'run by test/groups/routes')
  t.ok(files.includes('test/routes/ingest-large.test.ts'), 'a file that runs on its own')
  t.same(files.filter((f) => f.startsWith('test/replicas/') || f.includes('/fixtures/') || !f.endsWith('.test.ts')), [])
})

t.test('the PostgreSQL stage: the files whose imports reach test/helper.ts, directly or through a fixture', async (t) => {
  const database = stageFiles('database')
  t.ok(database.includes('test/groups/fixtures-and-postgres.test.ts'), 'test/postgres/ is in it')
  t.ok(database.includes('test/groups/routes.test.ts'), 'the route tests (helper.js directly)')
  t.ok(reachesHelper(join(ROOT, 'test/startup/npm-start.test.ts')), 'through test/fixtures/ingest.ts alone too')
  t.notOk(database.includes('test/groups/startup-and-terminals.test.ts'), 'not start-up checks and the server on a terminal')
  t.notOk(database.includes('test/groups/documents.test.ts'), 'not the documents and the linters')
  t.notOk(database.includes('test/db/pglite-memory.test.ts'), 'not a test of PGlite itself')
  t.same(database.filter((f) => !reachesHelper(join(ROOT, f))), [])
})

t.test('the Node 24 stage on PGlite: the files under the runtime-sensitive places that the PostgreSQL stage, also on Node 24, does not run', async (t) => {
  const runtime = stageFiles('runtime')
  const database = stageFiles('database')
  t.ok(runtime.includes('test/groups/startup-and-terminals.test.ts'), 'start-up checks and the server on a terminal')
  t.ok(runtime.includes('test/db/pglite-memory.test.ts'), 'PGlite itself')
  t.ok(database.includes('test/groups/server-starts.test.ts'), 'server processes, grouped with npm start\'s test, which reaches the helper')
  t.notOk(runtime.includes('test/routes/ingest-large.test.ts'), 'uploads through the test database: in the PostgreSQL stage')
  t.ok(database.includes('test/routes/ingest-large.test.ts'))
  t.notOk(runtime.includes('test/routes/prices.test.ts'))
  t.notOk(runtime.includes('test/contract/linters.test.ts'))
  t.same(runtime.filter((f) => !runtimeSensitive(f)), [])
  t.ok(runtimeSensitive('test/groups/service-edges.test.ts'), 'a group with a file of test/http-caching/')
  t.notOk(runtimeSensitive('test/groups/documents.test.ts'), 'a group of the contract and the documents')
  t.notOk(runtime.includes('test/groups/documents.test.ts'))
  t.same(runtime.filter((f) => database.includes(f)), [], 'no file in both')
  // Every runtime-sensitive file runs under Node 24 in one of the two stages.
  t.same(testFiles().filter((f) => runtimeSensitive(f) && !runtime.includes(f) && !database.includes(f)), [])
  t.throws(() => stageFiles('nightly'), { message: 'unknown stage "nightly": database or runtime' })
})

t.test('test:times: each file\'s own time (its last top-level # time=), slowest first', async (t) => {
  const dir = t.testdir({
    test: {
      'a.test.ts.tap': '# Subtest: x\n    ok 1 - x # time=900ms\nok 1 - x # time=901ms\n1..1\n# time=1500.5ms\n',
      'b.test.ts.tap': 'not ok 1 - y\n1..1\n# time=250ms\n',
      'nothing.tap': 'TAP version 14\n'
    }
  })
  const times = readTimes(dir)
  t.same(times.map((f) => [f.file, f.ms, f.ok]), [['test/a.test.ts', 1500.5, true], ['test/b.test.ts', 250, false]])
  t.equal(formatTimes(times, 1), '    1.5 s  test/a.test.ts\n2 files; their times add up to 1.8 s (files run in parallel, so the run took less)')
})
