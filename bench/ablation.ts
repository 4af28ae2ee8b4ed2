import { CpuMeter } from './cpu.js'
import { startJsonServer, stop } from './processes.js'
import { measured, unexpected, type LoadSettings } from './reads.js'
import { markdownTable, num } from './stats.js'

/** The plugins a GET /v1/prices/latest passes through besides the route and the read cache. */
const PER_REQUEST = ['cors', 'rate-limit', 'metrics', 'http-caching', 'http-server']

type Variant = { swap: string[] } | { bare: 'floor' | 'fastify' | 'node:http' }
const VARIANTS: Array<{ label: string, variant: Variant }> = [
  { label: 'the service, every plugin', variant: { swap: [] } },
  ...PER_REQUEST.map((name) => ({ label: `the service without ${name}`, variant: { swap: [name] } })),
  { label: `the service without all ${PER_REQUEST.length} of them`, variant: { swap: PER_REQUEST } },
  { label: 'design-card floor: bare Fastify + @fastify/cors + @fastify/rate-limit, the same bytes', variant: { bare: 'floor' } },
  { label: 'bare Fastify route sending the same bytes', variant: { bare: 'fastify' } },
  { label: 'bare node:http sending the same bytes', variant: { bare: 'node:http' } }
]

interface Figures { rps: number, cpu: number, problem: string | undefined }

/**
 * `npm run bench -- --ablation`: each per-request plugin's server CPU on GET /v1/prices/latest,
 * measured by stubbing it out. Variants interleave and keep their best run (interference only adds).
 */
export async function ablation (s: LoadSettings, passes: number, log: (m: string) => void): Promise<string> {
  const best: Figures[] = VARIANTS.map(() => ({ rps: 0, cpu: Number.POSITIVE_INFINITY, problem: undefined }))
  for (let pass = 1; pass <= passes; pass++) {
    for (const [i, { label, variant }] of VARIANTS.entries()) {
      log(`ablation ${pass}/${passes}: ${label}`)
      const { child, ready } = await startJsonServer<{ port: number }>('ablation-server.ts', JSON.stringify(variant))
      try {
        const { r, cpu } = await measured(`http://127.0.0.1:${ready.port}`, { path: '/v1/prices/latest' }, s, new CpuMeter([child.pid as number]))
        const figures = best[i] as Figures
        figures.rps = Math.max(figures.rps, r.rps)
        figures.cpu = Math.min(figures.cpu, cpu)
        figures.problem ??= unexpected(r)
      } finally {
        await stop(child)
      }
    }
  }
  // The base is the service with every plugin: what a plugin's row saves is its share of it.
  const base = (best[0] as Figures).cpu
  const rows = VARIANTS.map(({ label }, i) => {
    const f = best[i] as Figures
    const saved = base - f.cpu
    return [
      label + (f.problem === undefined ? '' : ` (⚠ ${f.problem})`),
      num(f.rps),
      `${num(f.cpu * 1e6, 1)} µs`,
      i === 0 ? '—' : `${num(saved * 1e6, 1)} µs (${num(saved / base * 100)} %)`
    ]
  })
  return `## Ablation: GET /v1/prices/latest (all towns)\n\nServer CPU per request is utime + stime of the server process over the run ÷ requests; ` +
    `best of ${passes} interleaved passes. "Saved" is what the service with every plugin costs more than the variant: ` +
    'for a plugin, its share of a request.\n\n' +
    markdownTable(['variant', 'req/s', 'CPU/req', 'saved vs the service'], rows)
}
