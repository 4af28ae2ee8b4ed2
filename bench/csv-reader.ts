import { realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import Papa from 'papaparse'
import { acceptedCycleWindow } from '../src/domain/cycle.js'
import { cycleCsvBatches, PAPA_OPTIONS } from '../src/ingest/csv.js'
import { sampleCsv } from './ingest-write.js'
import { num, type TableRow } from './stats.js'

/**
 * The CSV reader (src/ingest/csv.ts) on the bench's 20,038-row file, in process, against papaparse
 * alone parsing the same text with the reader's options and no validation. Runs alternate and each
 * side keeps its fastest (interference on a shared machine only ever adds time).
 * Alone: `npx tsx bench/csv-reader.ts [--quick]`.
 */

export interface CsvReaderTiming {
  rows: number
  bytes: number
  readerMs: number
  papaMs: number
}

export function benchCsvReader (rounds = 40): CsvReaderTiming {
  const { csv, rows } = sampleCsv(86)
  const text = csv.toString('utf8')
  const window = acceptedCycleWindow() // as the route reads it
  const reader = (): number => {
    let n = 0
    for (const batch of cycleCsvBatches(text, undefined, window)) n += batch.length
    return n
  }
  const papa = (): number => {
    // The header, and the empty line after the file's last break, are no records.
    return Papa.parse<string[]>(text, PAPA_OPTIONS).data.length - 2
  }
  const timed = (fn: () => number): number => {
    const start = performance.now()
    const n = fn()
    const elapsed = performance.now() - start
    if (n !== rows) throw new Error(`read ${n} rows of ${rows}`)
    return elapsed
  }
  for (let i = 0; i < 3; i++) { reader(); papa() } // JIT warm-up
  let readerMs = Infinity
  let papaMs = Infinity
  for (let i = 0; i < rounds; i++) {
    readerMs = Math.min(readerMs, timed(reader))
    papaMs = Math.min(papaMs, timed(papa))
  }
  return { rows, bytes: csv.length, readerMs, papaMs }
}

export function csvReaderRow (t: CsvReaderTiming): TableRow {
  const rate = (ms: number): number => t.rows / ms * 1000
  return {
    scenario: `CSV reader: ${num(t.rows)} rows`,
    service: `${num(rate(t.readerMs))} rows/s (${t.readerMs.toFixed(1)} ms)`,
    serviceP99: '—',
    ceiling: `${num(rate(t.papaMs))} rows/s (${t.papaMs.toFixed(1)} ms, papaparse alone)`,
    ratio: t.papaMs / t.readerMs // rows/s ÷ rows/s
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const t = benchCsvReader(process.argv.includes('--quick') ? 3 : 40)
  const row = csvReaderRow(t)
  process.stdout.write(`${row.scenario} (${(t.bytes / 1024 / 1024).toFixed(1)} MB): reader ${row.service}; ceiling ${row.ceiling}; ratio ${row.ratio?.toFixed(2) ?? '—'}\n`)
}
