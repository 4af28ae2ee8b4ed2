import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import t from '../support/file-test.js'
import ts from 'typescript'
import { build, insertPrices, resetData } from '../helper.js'
import type { ApiPrice } from '../routes/_fixtures.js'

/**
 * What a front-end team does: generate types from openapi.yaml with openapi-typescript, write a
 * client with openapi-fetch, compile it, and call a live server. The fixture must type-check
 * against the freshly generated types (its `@ts-expect-error` proves a misuse does not), and
 * each call must get what the types promise.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const FIXTURE = fileURLToPath(new URL('./fixtures/client.ts', import.meta.url))
const TOKEN = 'typed-client-token'

const dir = mkdtempSync(join(tmpdir(), 'typed-client-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const compilerOptions: ts.CompilerOptions = {
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
  noEmit: true,
  skipLibCheck: true
}

// The files both programs read (the libraries, @types/node, the generated types) are parsed once.
const host = ts.createCompilerHost(compilerOptions)
const parsed = new Map<string, ts.SourceFile | undefined>()
const parseOnce = host.getSourceFile.bind(host)
host.getSourceFile = (fileName, ...rest) => {
  if (!parsed.has(fileName)) parsed.set(fileName, parseOnce(fileName, ...rest))
  return parsed.get(fileName)
}

/** Diagnostics of a program made of `file`, as `line: message` (line 1-based). */
function typeCheck (file: string): string[] {
  const program = ts.createProgram([file], compilerOptions, host)
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file !== undefined && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0
    return `${line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0] as string}`
  })
}

/**
 * The fixture's exports as this file sees them. Not `typeof import('./fixtures/client.js')`:
 * that would pull the fixture into the repository's program, where ./openapi.js does not exist.
 */
interface Fixture {
  connect: (baseUrl: string) => unknown
  latest: (client: unknown, town?: string) => Promise<ApiPrice[]>
  history: (client: unknown, town: string, pageSize: number) => Promise<{ pages: number, rows: ApiPrice[] }>
  exportCsv: (client: unknown, town: string) => Promise<{ contentType: string | null, text: string }>
  towns: (client: unknown) => Promise<string[]>
  health: (client: unknown) => Promise<string>
  ingest: (client: unknown, token: string, csv: string) => Promise<Record<string, unknown>>
  ingestWithoutToken: (client: unknown, csv: string) => Promise<{ status: number, detail: unknown }>
  misuse: (client: unknown) => Promise<{ status: number, error: unknown }>
  cycles: (client: unknown) => Promise<Array<{ valid_from: string, towns: number, super_petrol: { min: number, cheapest_town: string } }>>
  cycle: (client: unknown, validFrom: string) => Promise<{ cycle?: { valid_from: string, towns: number }, status: number, detail?: string }>
  changes: (client: unknown, town?: string) => Promise<Array<{ town: string, super_petrol: { price: number, previous: number | null, change: number | null } }>>
  feed: (client: unknown) => Promise<{ contentType: string | null, text: string }>
  freshness: (client: unknown) => Promise<{ latest: string | null, current: boolean }>
  dryRun: (client: unknown, token: string, csv: string) => Promise<{ status: string, cycles: Array<{ valid_from: string, previous_valid_from: string | null, new_towns: string[], missing_towns: string[], warnings: Array<{ detail: string }> }> }>
}

t.before(async () => {
  // The temporary project: generated types, the fixture, ESM, and the repo's node_modules.
  // From the document the server serves, as a front-end team would.
  const served = await build(t)
  const ast = await openapiTS((await served.inject('/v1/openapi.json')).body)
  await served.close()
  writeFileSync(join(dir, 'openapi.d.ts'), astToString(ast))
  writeFileSync(join(dir, 'client.ts'), readFileSync(FIXTURE, 'utf8'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
})

t.test('the client type-checks against types generated from openapi.yaml', async (t) => {
  t.same(typeCheck(join(dir, 'client.ts')), [], 'no diagnostics: the @ts-expect-error line really is an error')
})

t.test('without its @ts-expect-error, the misuse limit: "x" fails to compile', async (t) => {
  const source = readFileSync(join(dir, 'client.ts'), 'utf8')
  const lines = source.split('\n')
  const marker = lines.findIndex((l) => l.includes('@ts-expect-error'))
  t.ok(marker > 0, 'the fixture marks its misuse')
  lines[marker] = '' // keep line numbers
  writeFileSync(join(dir, 'client-unchecked.ts'), lines.join('\n'))
  const diagnostics = typeCheck(join(dir, 'client-unchecked.ts'))
  t.equal(diagnostics.length, 1, diagnostics.join('\n'))
  t.match(diagnostics[0], new RegExp(`^${marker + 2}: .*Type 'string' is not assignable to type 'number'`))
})

t.test('the typed client against a live server: latest, history pages, towns, health, export, ingest', async (t) => {
  await resetData()
  const cycles = ['2026-07-15', '2026-08-15', '2026-09-15']
  await insertPrices(cycles.flatMap((validFrom, c) => ['Nairobi', 'Mombasa'].map((town, i) => ({
    town, superPetrol: (180 + c + i).toFixed(2), diesel: '170.50', kerosene: '150.25', validFrom
  }))))
  const app = await build(t, { config: { ingestToken: TOKEN } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const c = await import(pathToFileURL(join(dir, 'client.ts')).href) as Fixture
  const client = c.connect(`http://127.0.0.1:${port}`)

  t.same(await c.latest(client, 'NAIROBI'), [
    { id: 5, town: 'Nairobi', super_petrol: 182, diesel: 170.5, kerosene: 150.25, valid_from: '2026-09-15', valid_to: '2026-10-14' }
  ])
  t.same((await c.latest(client)).map((p) => p.town), ['Mombasa', 'Nairobi'])

  const { pages, rows } = await c.history(client, 'nairobi', 2)
  t.equal(pages, 2, 'three rows in pages of two: 2, then 1')
  t.same(rows.map((p) => [p.id, p.valid_from]), [[5, '2026-09-15'], [3, '2026-08-15'], [1, '2026-07-15']])

  t.same(await c.towns(client), ['Mombasa', 'Nairobi'])
  t.equal(await c.health(client), 'healthy')

  const exported = await c.exportCsv(client, 'mombasa')
  t.equal(exported.contentType, 'text/csv; charset=utf-8')
  t.equal(exported.text, [
    'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)',
    '15-09-2026,14-10-2026,Mombasa,183.00,170.50,150.25',
    '15-08-2026,14-09-2026,Mombasa,182.00,170.50,150.25',
    '15-07-2026,14-08-2026,Mombasa,181.00,170.50,150.25',
    ''
  ].join('\r\n'))

  const upload = 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)\n15-10-2026,14-11-2026,Nairobi,190.00,175.00,155.00\n15-10-2026,14-11-2026,Kisumu,191.00,176.00,156.00\n'
  t.same(await c.ingestWithoutToken(client, upload), { status: 401, detail: 'Invalid authorization token for ingestion endpoint.' })
  const ingested = await c.ingest(client, TOKEN, upload)
  t.match(ingested, { status: 'success', records_processed: 2, inserted: 2, updated: 0, unchanged: 0, timestamp: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/ })
  t.same((await c.latest(client)).map((p) => [p.town, p.super_petrol, p.valid_from]), [['Kisumu', 191, '2026-10-15'], ['Nairobi', 190, '2026-10-15']],
    'spec 4.2 r6: the ingest cleared the latest cache')

  // D40–D42: the operations beyond the original service, through the same typed client.
  t.strictSame((await c.cycles(client)).map((x) => [x.valid_from, x.towns, x.super_petrol.min, x.super_petrol.cheapest_town]), [
    ['2026-10-15', 2, 190, 'Nairobi'], ['2026-09-15', 2, 182, 'Nairobi'], ['2026-08-15', 2, 181, 'Nairobi'], ['2026-07-15', 2, 180, 'Nairobi']
  ])
  t.match(await c.cycle(client, '2026-09-15'), { status: 200, cycle: { valid_from: '2026-09-15', towns: 2 } })
  t.strictSame(await c.cycle(client, '2026-09-16'), { status: 404, detail: 'No cycle starts on 2026-09-16.' })
  t.strictSame((await c.changes(client, 'nairobi')).map((x) => [x.town, x.super_petrol]), [['Nairobi', { price: 190, previous: 182, change: 8 }]])
  t.strictSame((await c.changes(client)).map((x) => [x.town, x.super_petrol.previous]), [['Kisumu', null], ['Nairobi', 182]])
  const atom = await c.feed(client)
  t.equal(atom.contentType, 'application/atom+xml; charset=utf-8')
  t.match(atom.text, '<id>tag:fuelkenya.com,2026:cycles/2026-10-15</id>')
  t.match(await c.freshness(client), { latest: '2026-10-15' })
  const dry = await c.dryRun(client, TOKEN, upload.replace('190.00', '290.00'))
  t.strictSame(dry.cycles.map((x) => [x.valid_from, x.previous_valid_from, x.new_towns, x.missing_towns, x.warnings.map((w) => w.detail)]), [
    ['2026-10-15', '2026-09-15', ['Kisumu'], ['Mombasa'], [
      'Super (PMS) for Nairobi on line 2 moves 59.3% from 182.00 to 290.00 (cycle 2026-09-15).',
      "Super (PMS) for Nairobi on line 2 is 290.00, more than 15.0% outside the cycle's other towns (191.00 to 191.00).",
      // with two towns, each is the other's whole range
      "Super (PMS) for Kisumu on line 3 is 191.00, more than 15.0% outside the cycle's other towns (290.00 to 290.00)."
    ]]
  ])

  t.same(await c.misuse(client), {
    status: 422,
    error: { detail: [{ loc: ['query', 'limit'], msg: 'value is not a valid integer', type: 'type_error.integer' }] }
  })
})
