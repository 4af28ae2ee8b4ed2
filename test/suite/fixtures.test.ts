import { randomUUID } from 'node:crypto'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import nodeModule, { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { sql } from 'drizzle-orm'
import t from '../support/file-test.js'
import { createPglite, openDatabase, pgliteDatabase, rowsOf } from '../../src/db/client.js'
import { migrateDatabase } from '../../src/db/migrate.js'
import type { FastifyInstance } from 'fastify'
import { operations } from '../../src/generated/openapi.js'
import { build } from '../helper.js'
import { openApiDocument } from '../support/openapi-document.js'
import { startServer, waitUntil } from '../support/processes.js'
import { pgliteTemplate, seedDataDir, templatePath } from '../support/pglite-template.js'
// @ts-expect-error plain JavaScript for Node's module hooks, with no declarations
import { compileAhead } from '../support/typescript-hooks.mjs'
// @ts-expect-error plain JavaScript, loaded by tap's node-arg before each test file
import { removeLeftBehind, running } from '../support/fixtures-per-process.mjs'

/** The fixtures made once per run (test/support/pglite-template.ts, openapi-document.ts, the TypeScript cache). */
const journal = JSON.parse(readFileSync(new URL('../../drizzle/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] }

const migrationsApplied = async (database: Awaited<ReturnType<typeof openDatabase>>): Promise<number> =>
  Number(rowsOf<{ n: number }>(await database.db.execute(sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`))[0]?.n)

t.test('the PGlite template: every migration applied, no rows, and each copy its own database', async (t) => {
  t.match(templatePath(), /node_modules\/\.cache\/fuel-price-service\/pglite-migrated-[0-9a-f]{16}\.tar$/)
  const open = async (): Promise<Awaited<ReturnType<typeof openDatabase>>> => {
    const database = await pgliteDatabase(await createPglite('memory://', { loadDataDir: await pgliteTemplate() }))
    t.teardown(async () => { await database.close() })
    return database
  }
  const [a, b] = [await open(), await open()]
  t.equal(await migrationsApplied(a), journal.entries.length, 'the migrations of drizzle/, all applied')
  t.same(rowsOf<{ datname: string }>(await a.db.execute(sql`SELECT datname FROM pg_database ORDER BY datname`)), [{ datname: 'postgres' }], 'the one database, without the templates')
  t.ok((await pgliteTemplate()).size < 30_000_000, `the dump: ${(await pgliteTemplate()).size} bytes`)
  t.equal(rowsOf<{ n: number }>(await a.db.execute(sql`SELECT count(*)::int AS n FROM fuel_prices`))[0]?.n, 0)
  await a.db.execute(sql`INSERT INTO fuel_prices (town, super_petrol, diesel, kerosene, valid_from, valid_to) VALUES ('Nairobi', 1, 1, 1, '2026-01-15', '2026-02-14')`)
  t.equal(rowsOf<{ n: number }>(await b.db.execute(sql`SELECT count(*)::int AS n FROM fuel_prices`))[0]?.n, 0, 'a row written in one copy is not in another')
})

t.test('seedDataDir: a DATA_DIR the service opens as an existing, migrated database', async (t) => {
  const dataDir = await seedDataDir(join(t.testdir(), 'data'))
  const database = await openDatabase({ dataDir })
  t.teardown(async () => { await database.close() })
  t.equal(await migrationsApplied(database), journal.entries.length)
  await migrateDatabase(database) // what every start does: nothing left to apply
  t.equal(await migrationsApplied(database), journal.entries.length)
})

t.test('openApiDocument: openapi.yaml as parsed, the same object for every caller of a process', async (t) => {
  const document = openApiDocument()
  t.equal(document.openapi, '3.1.0')
  t.equal(openApiDocument(), document)
})

t.test('the apps a process builds share their compiled schemas: one validator and one serializer per schema', async (t) => {
  const compiled = async (app: FastifyInstance): Promise<{ query: unknown, error: unknown }> => {
    let found = { query: undefined as unknown, error: undefined as unknown }
    app.addHook('preHandler', (request, reply, done) => {
      found = { query: request.getValidationFunction('querystring'), error: reply.getSerializationFunction('422') }
      done()
    })
    t.equal((await app.inject('/v1/prices?limit=1')).statusCode, 200)
    return found
  }
  const [first, second] = [await compiled(await build(t)), await compiled(await build(t))]
  t.type(first.query, 'function', 'the query validator of GET /v1/prices')
  t.type(first.error, 'function', 'the serializer of its 422 answer')
  t.equal(second.query, first.query, 'the second app validates with the first one\'s function')
  t.equal(second.error, first.error, 'and serializes with the first one\'s function')
  // Fastify lower-cases a headers schema only with its own compilers: none may depend on that.
  t.strictSame(Object.entries(operations).filter(([, o]) => 'headers' in o.schema).map(([id]) => id), [], 'no operation validates headers')
})

// A stand-in server that answers 200 and writes the line the service writes once it listens.
const STAND_IN = `const s = require('node:http').createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), process.env.HOST, () =>
  console.log(JSON.stringify({ msg: 'Server listening at http://127.0.0.1:' + s.address().port, portGiven: process.env.PORT })))`

t.test('startServer: the server picks its own port (PORT=0) and the address comes from its own listening line', async (t) => {
  const server = await startServer({ args: ['-e', STAND_IN], cwd: process.cwd(), env: { PATH: process.env.PATH ?? '' }, healthPath: '/' })
  t.teardown(async () => { await server.stop() })
  const line = JSON.parse(server.output().trim().split('\n')[0] as string) as { msg: string, portGiven: string }
  t.equal(line.portGiven, '0', 'no port picked beforehand, which another process could take first')
  t.equal(`Server listening at ${server.url}`, line.msg, 'the URL is the one the process itself listens on')
  t.match(server.url, /^http:\/\/127\.0\.0\.1:[1-9]\d*$/)
})

t.test('startServer: a test process that ends before its teardown takes its servers with it', async (t) => {
  // The top level of a test file that starts a server, then fails before registering its stop.
  const script = `import { startServer } from './test/support/processes.ts'
const server = await startServer({ args: ['-e', ${JSON.stringify(STAND_IN)}], cwd: process.cwd(), env: { PATH: process.env.PATH ?? '' }, healthPath: '/' })
console.log(server.pid)
throw new Error('the file failed before its teardown')`
  let pid = 0
  const status = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, ['--import=./test/support/typescript.mjs', '--input-type=module', '-e', script], { cwd: process.cwd(), env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.on('data', (d: Buffer) => { pid = Number(d.toString().trim()) })
    child.once('exit', resolve)
  })
  t.equal(status, 1, 'the file failed')
  t.ok(pid > 0, `the server was started (pid ${pid})`)
  await waitUntil(() => !running(pid), 5000)
  t.equal(running(pid), false, 'and ended with it')
})

t.test('compileAhead: a TypeScript file the cache lacks is compiled once, then loaded from the cache; an edit compiles it again', async (t) => {
  const compile = compileAhead as (paths: string[]) => number
  const file = join(t.testdir(), 'probe.ts')
  const marker = randomUUID() // text no earlier run has cached
  writeFileSync(file, `export const marker: string = '${marker}'\n`)
  t.equal(compile([file]), 1, 'not in the cache: compiled')
  t.equal(compile([file]), 0, 'in the cache: nothing to do')
  t.equal(((await import(pathToFileURL(file).href)) as { marker: string }).marker, marker, 'the loader runs the compiled file')
  writeFileSync(file, `export const marker: string = '${marker}-edited'\n`)
  t.equal(compile([file]), 1, 'an edited file is compiled again')
})

t.test('on Node 20, a package\'s CommonJS entry loads through require, with every name it exports', async (t) => {
  const require = createRequire(import.meta.url)
  // The hooks run off-thread only before Node 22.15; from then on the ES builds load as published.
  const offThread = typeof (nodeModule as { registerHooks?: unknown }).registerHooks !== 'function'
  for (const specifier of ['@sinclair/typebox', '@sinclair/typebox/value', 'drizzle-orm', 'drizzle-orm/pg-core', 'fastify', 'papaparse', 'prom-client']) {
    t.equal(import.meta.resolve(specifier).endsWith('?required'), offThread, `${specifier}: ${import.meta.resolve(specifier)}`)
    if (!offThread) continue
    const namespace = await import(specifier) as Record<string, unknown>
    const required = require(specifier) as Record<string, unknown>
    t.equal(namespace.default, required, `${specifier}: the module require gives`)
    const names = Object.keys(required).filter((name) => name !== 'default' && name !== '__esModule')
    t.ok(names.length > 0, `${specifier}: ${names.length} names`)
    t.strictSame(Object.keys(namespace).filter((name) => name !== 'default').sort(), names.sort(), `${specifier}: each of its names`)
    t.ok(names.every((name) => namespace[name] === required[name]), `${specifier}: the same values`)
  }
})

t.test('an ES module in a package without a "type" still loads as one, default export and names', async (t) => {
  const dir = t.testdir({
    node_modules: { 'typeless-esm': { 'package.json': '{"name":"typeless-esm","main":"index.js"}', 'index.js': 'export default function answer () { return 42 }\nexport const named = 7\n' } },
    'importer.mjs': "import answer, { named } from 'typeless-esm'\nexport const found = { answer: answer(), named, url: import.meta.resolve('typeless-esm') }\n"
  })
  const { found } = await import(pathToFileURL(join(dir, 'importer.mjs')).href) as { found: { answer: number, named: number, url: string } }
  t.strictSame(found, { answer: 42, named: 7, url: pathToFileURL(join(dir, 'node_modules', 'typeless-esm', 'index.js')).href })
})

t.test('a test\'s own directory (t.testdir, as the server and DATA_DIR tests use) is gone when the test ends', async (t) => {
  let made = ''
  await t.test('a test that writes there', async (t) => {
    made = t.testdir()
    writeFileSync(join(made, 'file'), 'kept until the test ends')
  })
  t.match(made, /\.tap\/fixtures\//)
  t.equal(existsSync(made), false, 'gone with its file')
})

t.test('a test\'s directory is its process\'s: two runs of one file side by side never share one', async (t) => {
  // Alone the file's name comes first; in its group (test/groups/fixtures-and-postgres), the group's, then the file's.
  t.match(t.testdir(), new RegExp(`/\\.tap/fixtures/(?:test-suite-fixtures\\.test\\.ts-${process.pid}|test-groups-fixtures-and-postgres\\.test\\.ts-${process.pid}-test-suite-fixtures\\.test\\.ts)-a-test-s-directory-is-its-process-s-`))
})

t.test('tap\'s before script removes the test directories of processes that are gone, and keeps a running one\'s', async (t) => {
  const fixtures = t.testdir()
  const gone = Number(execFileSync(process.execPath, ['-p', 'process.pid'], { encoding: 'utf8' }))
  const names = [`test-a.test.ts-${process.pid}`, `test-a.test.ts-${process.pid}-subtest`, `test-a.test.ts-${gone}`, `test-a.test.ts-${gone}-subtest`, 'test-a.test.ts-subtest']
  for (const name of names) mkdirSync(join(fixtures, name, 'data'), { recursive: true })
  ;(removeLeftBehind as (dir: string) => void)(fixtures)
  t.same(readdirSync(fixtures).sort(), [`test-a.test.ts-${process.pid}`, `test-a.test.ts-${process.pid}-subtest`])
})
