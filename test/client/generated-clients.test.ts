import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createClient as generateHeyApiClient } from '@hey-api/openapi-ts'
import t from '../support/file-test.js'
import ts from 'typescript'
import { build, insertPrices, resetData } from '../helper.js'

/**
 * Issue "typed clients from any generator": a second popular generator, @hey-api/openapi-ts, run
 * on the document the server serves (/v1/openapi.json), its client compiled under --strict and
 * every operation called against the live server. One success type per operation and one media
 * type per response (D43) is what lets it type each answer exactly, a file part as Blob | File.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const FIXTURE = fileURLToPath(new URL('./fixtures/hey-client.ts', import.meta.url))
const TOKEN = 'generated-client-token'
const CSV = 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)\n15-11-2026,14-12-2026,Nairobi,190.00,175.00,155.00\n'

const dir = mkdtempSync(join(tmpdir(), 'hey-client-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

await resetData()
await insertPrices(['2026-09-15', '2026-10-15'].flatMap((validFrom, c) => ['Nairobi', 'Mombasa'].map((town, i) => ({
  town, superPetrol: (180 + c + i).toFixed(2), diesel: '170.50', kerosene: '150.25', validFrom
}))))
const app = await build(t, { config: { ingestToken: TOKEN } })
await app.listen({ port: 0, host: '127.0.0.1' })
const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

t.before(async () => {
  const served = await (await fetch(`${baseUrl}/v1/openapi.json`)).text()
  writeFileSync(join(dir, 'openapi.json'), served)
  await generateHeyApiClient({
    input: join(dir, 'openapi.json'),
    output: { path: join(dir, 'hey'), importFileExtension: '.js' },
    logs: { level: 'silent' }
  })
  writeFileSync(join(dir, 'client.ts'), readFileSync(FIXTURE, 'utf8'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
})

t.test('the generated client and the fixture compile under --strict', async (t) => {
  const program = ts.createProgram([join(dir, 'client.ts')], {
    strict: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
    noEmit: true,
    skipLibCheck: true
  })
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  t.strictSame(diagnostics, [])
})

t.test('every operation through the generated client: typed successes, typed 401 and 422', async (t) => {
  const c = await import(pathToFileURL(join(dir, 'client.ts')).href) as {
    connect: (baseUrl: string) => unknown
    everyOperation: (client: unknown, token: string, csv: string) => Promise<Record<string, any>>
  }
  const all = await c.everyOperation(c.connect(baseUrl), TOKEN, CSV)
  t.strictSame(all.prices.map((p: { id: number, valid_from: string }) => [p.id, p.valid_from]), [[5, '2026-11-15'], [3, '2026-10-15'], [1, '2026-09-15']])
  t.equal(all.csv, 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)\r\n15-11-2026,14-12-2026,Nairobi,190.00,175.00,155.00\r\n15-10-2026,14-11-2026,Nairobi,181.00,170.50,150.25\r\n15-09-2026,14-10-2026,Nairobi,180.00,170.50,150.25\r\n')
  t.strictSame(all.dryRun.cycles.map((c: { valid_from: string, previous_valid_from: string, missing_towns: string[] }) =>
    [c.valid_from, c.previous_valid_from, c.missing_towns]), [['2026-11-15', '2026-10-15', ['Mombasa']]])
  t.match(all.ingested, { status: 'success', records_processed: 1, inserted: 1, updated: 0, unchanged: 0 })
  // Everything below was read after the ingest: the new cycle everywhere.
  t.strictSame(all.latest.map((p: { town: string, super_petrol: number }) => [p.town, p.super_petrol]), [['Nairobi', 190]])
  t.strictSame(all.changes.map((x: { town: string, super_petrol: unknown }) => [x.town, x.super_petrol]), [['Nairobi', { price: 190, previous: 181, change: 9 }]])
  t.strictSame(all.towns, ['Mombasa', 'Nairobi'])
  t.strictSame(all.cycles.map((x: { valid_from: string, towns: number }) => [x.valid_from, x.towns]), [['2026-11-15', 1], ['2026-10-15', 2], ['2026-09-15', 2]])
  t.match(all.cycle, { valid_from: '2026-10-15', towns: 2, super_petrol: { min: 181, max: 182, cheapest_town: 'Nairobi', dearest_town: 'Mombasa' } })
  t.match(all.feed, /^<\?xml version="1\.0" encoding="utf-8"\?>\n<feed xmlns="http:\/\/www\.w3\.org\/2005\/Atom">/)
  t.match(all.health, { status: 'healthy', latest_valid_from: '2026-11-15' })
  t.equal(all.openapi, '3.1.0')
  t.match(all.yaml, /^openapi: 3\.1\.0\n/)
  t.strictSame(all.unauthorized, { status: 401, detail: 'Invalid authorization token for ingestion endpoint.' })
  t.strictSame(all.invalid, {
    status: 422,
    detail: [{ loc: ['query', 'limit'], msg: 'ensure this value is greater than or equal to 1', type: 'value_error.number.not_ge' }]
  })
})
