import { randomBytes } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { Writable } from 'node:stream'
import postgres from 'postgres'
import t from '../support/file-test.js'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { migrateDatabase } from '../../src/db/migrate.js'
import { STORAGE_FULL_DETAIL } from '../../src/errors/index.js'
import { checkResponses } from '../contract/openapi-validator.js'
import { testConfig } from '../helper.js'
import { needs, TEST_POSTGRES_URL } from '../services.js'
import { mountTmpfs } from '../support/tmpfs.js'
import { cycleCsv, MiB } from './_full-disk.js'

/**
 * D61 on PostgreSQL: the prices table moved to a tablespace on a small tmpfs, so an upload meets
 * PostgreSQL's own `disk_full` (53100) inside COPY. The server must run on this machine.
 */

const host = new URL(TEST_POSTGRES_URL).hostname
const local = ['127.0.0.1', 'localhost', '[::1]'].includes(host) && hasUser('postgres')

function hasUser (name: string): boolean {
  try {
    execFileSync('id', [name], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

const services = await needs('postgres', 'tmpfs')
const skip = services.skip !== false ? services.skip : local ? false : `the PostgreSQL server at ${host} is not on this machine: a tablespace cannot be put on a tmpfs here`

t.test('[D61] PostgreSQL\'s disk_full inside an upload: 507 in the envelope, one short line, nothing written', { skip }, async (t) => {
  const disk = mountTmpfs(4 * MiB)
  t.teardown(disk.unmount)
  execFileSync('chown', ['postgres:postgres', disk.dir]) // the server writes there as its own user
  const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`
  const schema = `full_disk_${suffix}`
  const tablespace = `full_disk_${suffix}`
  const admin = postgres(TEST_POSTGRES_URL, { max: 1, onnotice: () => {} })
  await admin.unsafe(`CREATE SCHEMA "${schema}"`)
  await admin.unsafe(`CREATE TABLESPACE "${tablespace}" LOCATION '${disk.dir}'`)
  t.teardown(async () => {
    await admin.unsafe(`DROP SCHEMA "${schema}" CASCADE`)
    await admin.unsafe(`DROP TABLESPACE "${tablespace}"`)
    await admin.end()
  })
  const database = await openDatabase({ url: TEST_POSTGRES_URL, schema, poolMax: 4 })
  t.teardown(async () => { await database.close() })
  await migrateDatabase(database, TEST_POSTGRES_URL)
  await admin.unsafe(`ALTER TABLE "${schema}".fuel_prices SET TABLESPACE "${tablespace}"`)

  const raw: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { raw.push(String(chunk)); done() } })
  const token = 'full-disk-postgres-token-0123456789'
  const app = await buildApp({ config: testConfig({ ingestToken: token }), database, logger: { level: 'info', stream } })
  checkResponses(app, (v) => t.fail(`contract: ${v.method} ${v.route} ${v.status}: ${v.problem}`, { violation: v }))
  t.teardown(async () => { await app.close() })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const upload = async (csv: string): Promise<Response> => {
    const body = new FormData()
    body.append('file', new Blob([csv], { type: 'text/csv' }), 'cycle.csv')
    return await fetch(`${url}/v1/ingest/csv`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body })
  }
  t.equal((await upload(cycleCsv(2))).status, 201)

  const before = raw.length
  const res = await upload(cycleCsv(60_000, '15-11-2026', '14-12-2026')) // about 6 MB of table: more than the disk
  t.equal(res.status, 507)
  t.same(await res.json(), { detail: STORAGE_FULL_DETAIL })
  const written = raw.slice(before)
  t.equal(written.length, 1, 'one line for the failure')
  t.ok((written[0] ?? '').length < 1000, `short: ${(written[0] ?? '').length} characters`)
  t.match(JSON.parse(written[0] ?? '{}'), { level: 50, res: { statusCode: 507 }, err: { type: 'PostgresError', code: '53100', message: /could not extend file .*: No space left on device/ } })
  t.notMatch(written.join(''), /Town 0|COPY|fuel_prices/, 'no rows, no SQL')
  const [{ n }] = await admin.unsafe(`SELECT count(*)::int AS n FROM "${schema}".fuel_prices`) as unknown as [{ n: number }]
  t.equal(n, 2, 'nothing written')
})
