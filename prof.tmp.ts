import { sampleCsv } from './bench/ingest.ts'
import { decodeCsv, parseCycleCsv } from './src/ingest/csv.ts'
const { csv } = sampleCsv(86)
const ts: number[] = []
for (let i = 0; i < 30; i++) {
  const t0 = performance.now()
  parseCycleCsv(decodeCsv(csv))
  ts.push(performance.now() - t0)
}
ts.sort((a, b) => a - b)
console.log('min', ts[0]!.toFixed(1), 'median', ts[15]!.toFixed(1))
