import { join } from 'node:path'
import { Writable } from 'node:stream'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { rowsOf } from '../../src/db/client.js'
import { checkResponses } from '../contract/openapi-validator.js'
import { testConfig } from '../helper.js'
import { seedDataDir } from '../support/pglite-template.js'
import { mountTmpfs, type Tmpfs } from '../support/tmpfs.js'

/**
 * D61: the embedded PGlite's data directory on a real file system that runs out of space (a small
 * tmpfs, full-disk*.test.ts): the service on it, uploads, and the lines it logs.
 */

export const MiB = 1024 * 1024
const TOKEN = 'full-disk-test-token-0123456789'
const HEADER = 'From,To,Town,Super (PMS),Diesel (AGO),Kerosene (IK)'

/** One cycle of `towns` towns: about 60 bytes a row. */
export function cycleCsv (towns: number, validFrom = '15-10-2026', validTo = '14-11-2026'): string {
  const rows = [HEADER]
  for (let i = 0; i < towns; i++) rows.push(`${validFrom},${validTo},Town ${String(i).padStart(6, '0')},180.${String(i % 100).padStart(2, '0')},171.00,150.50`)
  return rows.join('\n')
}

function form (csv: string): FormData {
  const body = new FormData()
  body.append('file', new Blob([csv], { type: 'text/csv' }), 'cycle.csv')
  return body
}

export interface Service { app: FastifyInstance, url: string, lines: string[] }

export async function serviceOn (t: Test, dataDir: string): Promise<Service> {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const app = await buildApp({ config: testConfig({ dataDir, ingestToken: TOKEN }), logger: { level: 'info', stream } })
  checkResponses(app, (v) => t.fail(`contract: ${v.method} ${v.route} ${v.status}: ${v.problem}`, { violation: v }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address() as { port: number }
  return { app, url: `http://127.0.0.1:${address.port}`, lines }
}

export async function upload (url: string, csv: string): Promise<Response> {
  return await fetch(`${url}/v1/ingest/csv`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: form(csv) })
}

export async function storedRows (url: string): Promise<number> {
  const res = await fetch(`${url}/v1/prices?limit=1000`)
  return ((await res.json()) as unknown[]).length
}

/** The lines written since `from`, parsed. */
export function linesSince (service: Service, from: number): Array<Record<string, any>> {
  return service.lines.slice(from).map((line) => JSON.parse(line) as Record<string, any>)
}

const WAL_SEGMENT = 16 * MiB

/** Writes WAL (rows of a scratch table) until the current segment has less than 2 MiB left. */
export async function fillWalSegment (app: FastifyInstance): Promise<void> {
  const { db } = app.database
  await db.execute(sql`CREATE TABLE wal_fill (x text)`)
  for (;;) {
    const [row] = rowsOf<{ lsn: string }>(await db.execute(sql`SELECT pg_current_wal_insert_lsn()::text AS lsn`))
    const left = WAL_SEGMENT - (Number.parseInt((row?.lsn ?? '').split('/')[1] ?? '', 16) % WAL_SEGMENT)
    if (left < 2 * MiB) return
    // about 1.1 kB of WAL a row; aim for a megabyte and a half left
    await db.execute(sql`INSERT INTO wal_fill SELECT repeat(md5(g::text), 32) FROM generate_series(1, ${Math.ceil((left - 1.5 * MiB) / 1100)}) g`)
  }
}

/** A tmpfs of `size` bytes holding a migrated data directory (a copy of the template: no initdb, which is not what is tested). */
export async function onFullDisk (t: Test, size: number): Promise<{ disk: Tmpfs, dataDir: string }> {
  const disk = mountTmpfs(size)
  t.teardown(disk.unmount)
  return { disk, dataDir: await seedDataDir(join(disk.dir, 'data')) }
}
