import type postgres from 'postgres'
import { loadSampleTowns, sampleCycles } from '../scripts/sample/generate.js'
import { copyCsv, timeCopy } from './database.js'
import { INGEST_TOKEN, runnerAddress } from './processes.js'

/** The newest sample cycle; 430 cycles back from it is 1990, ~36 years of history. */
export const LAST_VALID_FROM = '2025-10-15'

export interface IngestTiming {
  rows: number
  bytes: number
  serviceMs: number
  copyMs: number
  /** What the upload found: 'empty table', or (PGlite's second file) rows already stored. */
  onto: string
}

export interface UploadResult { status: number, ms: number, body: string }

/** multipart/form-data field `file` (text/csv), timed from the request to the read answer. */
export async function upload (serviceUrl: string, csv: Buffer): Promise<UploadResult> {
  const form = new FormData()
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'prices.csv')
  const start = performance.now()
  const res = await fetch(`${serviceUrl}/v1/ingest/csv`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${INGEST_TOKEN}`, 'x-forwarded-for': runnerAddress() }
  })
  const body = await res.text()
  return { status: res.status, ms: performance.now() - start, body }
}

export function sampleCsv (cycles: number): { csv: Buffer, rows: number } {
  const towns = loadSampleTowns()
  return { csv: Buffer.from(sampleCycles({ towns, cycles, lastValidFrom: LAST_VALID_FROM })), rows: cycles * towns.length }
}

/** ~20k and ~100k rows ingested `repeat` times each, alternating with COPY; leaves ~100k rows for the reads. */
export async function benchIngest (serviceUrl: string, sql: postgres.Sql, repeat: number): Promise<IngestTiming[] | undefined> {
  const timings: IngestTiming[] = []
  for (const cycles of [86, 430]) {
    const { csv, rows } = sampleCsv(cycles)
    const serviceMs: number[] = []
    const copyMs: number[] = []
    // Alternating exposes both to the same interference; each keeps its fastest run.
    for (let i = 0; i < repeat; i++) {
      await sql`TRUNCATE fuel_prices RESTART IDENTITY`
      const result = await upload(serviceUrl, csv)
      if (result.status === 404) {
        await loadByCopy(sql, sampleCsv(430).csv)
        return undefined
      }
      if (result.status !== 201) throw new Error(`ingest of ${rows} rows answered ${result.status}: ${result.body.slice(0, 500)}`)
      const answer = JSON.parse(result.body) as { records_processed?: number, inserted?: number }
      if (answer.records_processed !== rows || answer.inserted !== rows) {
        throw new Error(`ingest of ${rows} rows reported ${result.body.slice(0, 500)}`)
      }
      serviceMs.push(result.ms)
      copyMs.push(await timeCopy(sql, csv, rows))
    }
    timings.push({ rows, bytes: csv.length, serviceMs: Math.min(...serviceMs), copyMs: Math.min(...copyMs), onto: 'empty table' })
  }
  return timings
}

/** --pglite: both files uploaded once to a service on a fresh PGlite, against COPY on PostgreSQL. */
export async function benchIngestPglite (serviceUrl: string, sql: postgres.Sql): Promise<IngestTiming[]> {
  const timings: IngestTiming[] = []
  for (const [cycles, onto] of [[86, 'empty store'], [430, 'the ~20k rows already stored']] as const) {
    const { csv, rows } = sampleCsv(cycles)
    const result = await upload(serviceUrl, csv)
    if (result.status !== 201) throw new Error(`PGlite ingest of ${rows} rows answered ${result.status}: ${result.body.slice(0, 500)}`)
    timings.push({ rows, bytes: csv.length, serviceMs: result.ms, copyMs: await timeCopy(sql, csv, rows), onto })
  }
  await loadByCopy(sql, sampleCsv(430).csv)
  return timings
}

/** Without the ingest route the reads still need their ~100k rows (ids from the serial). */
async function loadByCopy (sql: postgres.Sql, csv: Buffer): Promise<void> {
  await sql`TRUNCATE fuel_prices RESTART IDENTITY`
  await copyCsv(sql, 'fuel_prices', csv)
}
