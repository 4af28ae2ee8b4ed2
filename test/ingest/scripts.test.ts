import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from '../support/file-test.js'
import { defaultUrl, runIngestCli, ingestUrl, whyUnreachable, type CliIo } from '../../scripts/ingest-cli.js'
import { SEED_CYCLES, seedSampleData, seedThroughService } from '../../scripts/seed.js'
import { todayInKenya } from '../../src/domain/cycle.js'
import { build, resetData, testDatabase } from '../helper.js'
import { HEADER, TOKEN, csv, rowCount } from '../fixtures/ingest.js'
import { seedDataDir } from '../support/pglite-template.js'
import { serverArgs } from '../support/dist.js'
import { outputMatching, startServer } from '../support/processes.js'

/** `npm run seed` and `npm run ingest`: the functions in-process, the entry points once each. */

const run = promisify(execFile)
const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx')

t.beforeEach(resetData)

t.test('todayInKenya: the calendar date in Nairobi (UTC+3), which decides the cycle', async (t) => {
  t.equal(todayInKenya(new Date('2026-01-14T20:59:59Z')), '2026-01-14')
  t.equal(todayInKenya(new Date('2026-01-14T21:00:00Z')), '2026-01-15')
})

t.test('[seed] 13 cycles × 233 towns ending with the active cycle; a second run inserts nothing', async (t) => {
  const database = await testDatabase()
  const first = await seedSampleData(database, '2026-03-14')
  t.equal(first.cycles.length, SEED_CYCLES)
  t.strictSame(first.cycles[0], { validFrom: '2026-02-15', validTo: '2026-03-14' }, 'the cycle active on 14 March')
  t.strictSame(first.cycles.at(-1), { validFrom: '2025-02-15', validTo: '2025-03-14' })
  t.strictSame({ ...first, cycles: undefined }, { recordsProcessed: 3029, inserted: 3029, updated: 0, unchanged: 0, cycles: undefined })
  const second = await seedSampleData(database, '2026-03-14')
  t.strictSame({ ...second, cycles: undefined }, { recordsProcessed: 3029, inserted: 0, updated: 0, unchanged: 3029, cycles: undefined })
  t.equal(await rowCount(), 3029)
})

t.test('ingestUrl: a base URL with or without /v1 and trailing slashes', async (t) => {
  t.equal(ingestUrl('http://localhost:8000', false), 'http://localhost:8000/v1/ingest/csv')
  t.equal(ingestUrl('https://api.fuelkenya.com/v1/', true), 'https://api.fuelkenya.com/v1/ingest/csv/dry-run', 'the dry-run operation (D43)')
  t.equal(defaultUrl({}), 'http://localhost:8000')
  t.equal(defaultUrl({ PORT: '9123', HOST: '0.0.0.0' }), 'http://localhost:9123', 'PORT as the service reads it')
  t.equal(defaultUrl({ PORT: '9123', HOST: '127.0.0.2' }), 'http://127.0.0.2:9123')
  t.equal(defaultUrl({ HOST: '::1' }), 'http://[::1]:8000')
})

t.test('[ingest script] posts the file, prints the outcome, exit status says how it went', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const dir = t.testdir({
    'jan.csv': csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25', '15-01-2026,14-02-2026,Mombasa,178.00,168.00,158.00'),
    'bad.csv': csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,abc,160.25')
  })
  const cli = async (args: string[], env: Record<string, string> = {}) => {
    const out: string[] = []
    const err: string[] = []
    const io: CliIo = { env, out: (l) => out.push(l), err: (l) => err.push(l) }
    const code = await runIngestCli(args, io)
    return { code, out: out.join('\n'), err: err.join('\n') }
  }
  const jan = join(dir, 'jan.csv')

  const dry = await cli([jan, '--url', url, '--token', TOKEN, '--dry-run', '--json'])
  t.equal(dry.code, 0)
  t.match(JSON.parse(dry.out), { status: 'dry_run', records_processed: 2, inserted: 2 })
  t.equal(await rowCount(), 0)

  const done = await cli([jan, `--url=${url}/v1`], { INGEST_TOKEN: TOKEN })
  t.equal(done.code, 0, done.err)
  t.match(JSON.parse(done.out), { status: 'success', records_processed: 2, inserted: 2, updated: 0, unchanged: 0 })
  t.equal(await rowCount(), 2)

  const refused = await cli([jan, '--url', url, '--token', 'wrong'])
  t.strictSame(refused, { code: 1, out: '', err: 'ingest failed: HTTP 401: Invalid authorization token for ingestion endpoint.' })
  const noToken = await cli([jan, '--url', url])
  t.equal(noToken.code, 1)

  const bad = await cli([join(dir, 'bad.csv'), '--url', url, '--token', TOKEN])
  // Issue 46: the column and the rule broken, beside the service's words.
  t.strictSame(bad, {
    code: 1,
    out: '',
    err: [
      'ingest failed: HTTP 400: Invalid price value: abc',
      '  where: line 2, column Diesel (AGO)',
      '  hint: A price is a plain decimal number with a point, such as 178.90.'
    ].join('\n')
  })

  // [D40] a dry run prints each cycle's comparison and warnings as an admin reads them.
  const feb = join(dir, 'feb.csv')
  writeFileSync(feb, csv(HEADER, '15-02-2026,14-03-2026,Nairobi,250.00,170.00,160.25', '15-02-2026,14-03-2026,Kisumu,181.00,171.00,161.00'))
  const review = await cli([feb, '--url', url, '--token', TOKEN, '--dry-run'])
  t.equal(review.code, 0, review.err)
  t.equal(review.out, [
    'dry run, nothing written: 2 rows (2 new, 0 changed, 0 unchanged)',
    '',
    'cycle 2026-02-15 to 2026-03-14 (compared with the cycle from 2026-01-15)',
    '  new towns: Kisumu',
    '  missing towns: Mombasa',
    '  warning: Cycle 2026-02-15 would lack 1 of the 2 towns of cycle 2026-01-15 (50.0%, more than 10.0%).',
    '  warnings: 3',
    '    Super (PMS) for Nairobi on line 2 moves 38.5% from 180.50 to 250.00 (cycle 2026-01-15).',
    '    Super (PMS) for Nairobi on line 2 is 250.00, more than 15.0% outside the cycle\'s other towns (181.00 to 181.00).',
    '    Super (PMS) for Kisumu on line 3 is 181.00, more than 15.0% outside the cycle\'s other towns (250.00 to 250.00).'
  ].join('\n'))
  t.equal(await rowCount(), 2, 'nothing written')

  t.equal((await cli([])).code, 2)
  t.equal((await cli([jan, 'extra'])).code, 2)
  t.equal((await cli([jan, '--colour', 'blue'])).code, 2)
  t.match(await cli([join(dir, 'missing.csv')]), { code: 2, err: /^cannot read .*missing\.csv/ })

  await app.close()
  // The URL tried and the system's reason, for each address a name resolves to.
  const port = new URL(url).port
  t.strictSame(await cli([jan, '--url', url, '--token', TOKEN]), { code: 1, out: '', err: `cannot reach ${url}/v1/ingest/csv: connect ECONNREFUSED 127.0.0.1:${port}` })
})

t.test('[ingest script] a refused header: the columns missing and found, and the likely cause', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const dir = t.testdir({ 'excel.csv': 'From;To;Town;Super (PMS);Diesel (AGO);Kerosene (IK)\r\n15-01-2026;14-02-2026;Nairobi;178,90;170,00;160,25\r\n' })
  const err: string[] = []
  const code = await runIngestCli([join(dir, 'excel.csv'), '--url', url, '--token', TOKEN, '--dry-run'], { env: {}, out: () => {}, err: (l) => err.push(l) })
  t.equal(code, 1)
  t.equal(err.join('\n'), [
    'ingest failed: HTTP 400: CSV header must include From, To, Town, Super (PMS), Diesel (AGO), Kerosene (IK)',
    '  where: line 1',
    '  missing columns: From, To, Town, Super (PMS), Diesel (AGO), Kerosene (IK)',
    '  found columns: "From;To;Town;Super (PMS);Diesel (AGO);Kerosene (IK)"',
    '  hint: The columns are separated by semicolons (;), not commas: save the file as "CSV UTF-8 (Comma delimited)", with a point before the decimals.'
  ].join('\n'))
  t.equal(await rowCount(), 0)
})

t.test('whyUnreachable: every address a name resolved to, as the system refused it', async (t) => {
  const refused = (address: string): Error => Object.assign(new Error(`connect ECONNREFUSED ${address}:8000`), { code: 'ECONNREFUSED' })
  // What fetch throws for `localhost` when both its addresses refuse (Node's address-family race).
  const both = new TypeError('fetch failed', { cause: Object.assign(new AggregateError([refused('::1'), refused('127.0.0.1')]), { code: 'ECONNREFUSED' }) })
  t.equal(whyUnreachable(both), 'connect ECONNREFUSED ::1:8000; connect ECONNREFUSED 127.0.0.1:8000')
  t.equal(whyUnreachable(new TypeError('fetch failed', { cause: Object.assign(new AggregateError([]), { code: 'ETIMEDOUT' }) })), 'ETIMEDOUT', 'no message: the code')
})

t.test('[npm run seed] through a service that cannot be reached: the URL tried, why, and what to set', async (t) => {
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise((resolve) => closed.close(resolve))
  await t.rejects(seedThroughService(`http://127.0.0.1:${port}`, {}), new Error(
    `cannot reach http://127.0.0.1:${port}/v1/ingest/csv: connect ECONNREFUSED 127.0.0.1:${port}. The data directory is in use, by the service as it ` +
    'seems, so the sample goes through its ingest: set PORT (and HOST) to where the service listens, or stop it'))
})

t.test('[npm run seed] the entry point, on an empty PGlite data dir: exit 0 and the counts; a bad setting or an unreachable database exits 1, named', async (t) => {
  // Running it twice is the in-process test above; one process start is enough here. The data
  // directory holds the migrated, empty template: a new one's initdb is test/db/pglite-memory's.
  const dir = t.testdir({})
  const env = { ...process.env, DATABASE_URL: '', DATA_DIR: await seedDataDir(join(dir, 'data')), LOG_LEVEL: 'silent' }
  const first = await run(TSX, ['scripts/seed.ts'], { env })
  t.match(first.stdout, /^seeded PGlite at .*: 13 cycles \(\d{4}-\d{2}-15 to \d{4}-\d{2}-14\), 3029 rows: 3029 inserted, 0 updated, 0 unchanged\n$/)

  const failed = await run(TSX, ['scripts/seed.ts'], { env: { ...env, DATABASE_URL: 'mysql://nope' } }).then(() => 0, (err: { code: number, stderr: string }) => {
    t.match(err.stderr, /^Invalid environment variable DATABASE_URL/)
    return err.code
  })
  t.equal(failed, 1, 'a bad setting exits non-zero')

  // A database that cannot be reached is named as the service's start names it, never `fetch failed`.
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise((resolve) => closed.close(resolve))
  const unreachable = await run(TSX, ['scripts/seed.ts'], { env: { ...env, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/fuel` } })
    .then(() => ({ code: 0, stderr: '' }), (err: { code: number, stderr: string }) => ({ code: err.code, stderr: err.stderr }))
  t.strictSame(unreachable, { code: 1, stderr: `seed failed: the PostgreSQL server at 127.0.0.1:${port} is not reachable (ECONNREFUSED); check DATABASE_URL and that PostgreSQL is running\n` })
})

t.test('[npm run ingest] the entry point: usage errors exit 2', async (t) => {
  writeFileSync(join(t.testdir({}), 'x.csv'), '')
  const code = await run(TSX, ['scripts/ingest-cli.ts'], { env: process.env }).then(() => 0, (err: { code: number, stderr: string }) => {
    t.match(err.stderr, /^usage: npm run ingest -- FILE\.csv/)
    return err.code
  })
  t.equal(code, 2)
})

t.test('[npm run ingest] the entry point finds the service by PORT in .env, and dry-runs by the dry-run operation', async (t) => {
  const app = await build(t, { config: { ingestToken: TOKEN } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as AddressInfo).port
  const dir = t.testdir({ '.env': `PORT=${port}\nHOST=127.0.0.1\nINGEST_TOKEN=${TOKEN}\n`, 'jan.csv': csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.50,170.00,160.25') })
  const paths: string[] = []
  app.server.prependListener('request', (request: { url?: string }) => { paths.push(request.url ?? '') })
  const { PORT: _p, HOST: _h, INGEST_TOKEN: _t, ...env } = process.env
  const dry = await run(TSX, [join(process.cwd(), 'scripts/ingest-cli.ts'), 'jan.csv', '--dry-run'], { cwd: dir, env })
  t.match(dry.stdout, /^dry run, nothing written: 1 rows \(1 new, 0 changed, 0 unchanged\)/)
  const real = await run(TSX, [join(process.cwd(), 'scripts/ingest-cli.ts'), 'jan.csv'], { cwd: dir, env })
  t.match(JSON.parse(real.stdout), { status: 'success', inserted: 1 })
  t.same(paths, ['/v1/ingest/csv/dry-run', '/v1/ingest/csv'])
})

t.test('[npm run seed] while the service holds the embedded database, the sample goes through its ingest', async (t) => {
  const dir = t.testdir({})
  const dataDir = await seedDataDir(join(dir, 'data')) // an existing, empty database: no initdb before the start
  const server = await startServer({
    args: await serverArgs(), // from dist/, as npm start runs it
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir, INGEST_TOKEN: TOKEN, LOG_LEVEL: 'info' }
  })
  t.teardown(async () => { await server.stop('SIGTERM') })
  // Written after the listen, once a query has found the database empty: awaited as a line.
  const emptyHint = /"msg":"no prices stored yet: `npm run seed` loads a year of sample prices \(the service may keep running\)/
  t.match(await outputMatching(server, emptyHint), emptyHint, 'the start line on an empty database says how')
  const port = new URL(server.url).port
  const { PORT: _p, HOST: _h, DATABASE_URL: _d, ...env } = process.env
  const seeded = await run(TSX, [join(process.cwd(), 'scripts/seed.ts')], { cwd: dir, env: { ...env, DATA_DIR: dataDir, PORT: port, INGEST_TOKEN: TOKEN } })
  t.match(seeded.stdout, new RegExp(`^seeded through the running service at http://localhost:${port}: 13 cycles, 3029 rows: 3029 inserted, 0 updated, 0 unchanged\\n$`))
  const towns = await (await fetch(`${server.url}/v1/towns`)).json() as string[]
  t.equal(towns.length, 233, 'the running service serves the sample at once')
})
