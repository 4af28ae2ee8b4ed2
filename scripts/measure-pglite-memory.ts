/**
 * `npx tsx scripts/measure-pglite-memory.ts [--load-seconds 20]`: the embedded default's memory (D36
 * PGlite memory settings): VmRSS idle, seeded, after one upload as large as MAX_UPLOAD_BYTES
 * allows, and after a mixed load, and VmHWM. Build first.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { cycleOf, cycleStartingIn, todayInKenya } from '../src/domain/cycle.js'
import { projectRoot } from '../src/project-root.js'
import { loadSampleTowns, sampleCycles } from './sample/generate.js'

const TOKEN = 'measure-token'
const MB = 1024 * 1024
/** The service's default MAX_UPLOAD_BYTES: the largest upload it takes. */
const MAX_UPLOAD_BYTES = 10 * MB
const ROOT = projectRoot()

/** The arguments of package.json's `start` after `node`, so this runs the server as it runs. */
function productionStartArgs (): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
  const [command, ...args] = pkg.scripts.start.trim().replace(/^exec\s+/, '').split(/\s+/) // `exec` hands npm's signals to node
  if (command !== 'node') throw new Error(`package.json start is not a plain node command: ${pkg.scripts.start}`)
  return args
}

/** VmRSS and VmHWM (peak) in bytes, from /proc: what the kernel charges the process. */
function memory (pid: number): { rss: number, hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') }
}

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

/** A GET's status, body read and dropped (node:http: no fetch pool in the way). */
async function rawGet (url: string, headers: Record<string, string> = {}): Promise<{ status: number }> {
  return await new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      res.resume()
      res.once('end', () => resolve({ status: res.statusCode ?? 0 }))
    })
    req.once('error', reject)
    req.end()
  })
}

/** SIGTERM (the server drains and exits), SIGKILL after 10 s. */
async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

interface Running { child: ChildProcess, pid: number, url: string }

function baseEnv (dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', INGEST_TOKEN: TOKEN }
  delete env.DATABASE_URL
  delete env.REDIS_URL
  return env
}

async function start (dataDir: string): Promise<Running & { startMs: number, readyRss: number }> {
  const port = await freePort()
  const began = Date.now()
  const child = spawn(process.execPath, productionStartArgs(), {
    cwd: ROOT, env: { ...baseEnv(dataDir), PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'inherit', 'inherit']
  })
  const url = `http://127.0.0.1:${port}`
  while (true) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    const health = await rawGet(`${url}/v1/health`).catch(() => undefined)
    if (health !== undefined) break
    if (Date.now() - began > 120_000) throw new Error('server not answering after 120 s')
    await sleep(100)
  }
  return { child, pid: child.pid as number, url, startMs: Date.now() - began, readyRss: memory(child.pid as number).rss }
}

async function seed (dataDir: string): Promise<void> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'scripts', 'seed.js')], { cwd: ROOT, env: baseEnv(dataDir), stdio: ['ignore', 'inherit', 'inherit'] })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  if (code !== 0) throw new Error(`seed exited with ${String(code)}`)
}

/** Idle RSS: after start-up work settles (GC, lazy compilation), as the bench reads it. */
async function idleRss (pid: number): Promise<number> {
  await sleep(3000)
  return memory(pid).rss
}

async function ingest (url: string, csv: string): Promise<number> {
  const form = new FormData()
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'cycle.csv')
  const res = await fetch(`${url}/v1/ingest/csv`, { method: 'POST', body: form, headers: { authorization: `Bearer ${TOKEN}` } })
  await res.arrayBuffer()
  return res.status
}

/** Twenty years of cycles ending two years before today's, for as many towns (the sample's, then numbered
 * copies) as `maxBytes` of CSV holds. */
function largestUpload (sampleTowns: string[], maxBytes: number): { csv: string, rows: number } {
  const cycles = 240
  const current = cycleOf(todayInKenya())
  const [y, m] = current.validFrom.split('-').map(Number) as [number, number]
  const lastValidFrom = cycleStartingIn(y * 12 + m - 1 - 24).validFrom
  const towns = (count: number): string[] => Array.from({ length: count }, (_, i) => `${sampleTowns[i % sampleTowns.length] ?? 'Town'}${i < sampleTowns.length ? '' : ` ${Math.floor(i / sampleTowns.length) + 1}`}`)
  const target = maxBytes - 1024 // room for the multipart framing
  let count = sampleTowns.length
  let csv = sampleCycles({ towns: towns(count), cycles, lastValidFrom })
  for (let i = 0; i < 4; i++) { // rows are nearly of one length: a few proportional steps land just under
    count = Math.floor(count * target / Buffer.byteLength(csv) * (i < 3 ? 1 : 0.999))
    csv = sampleCycles({ towns: towns(count), cycles, lastValidFrom })
  }
  while (Buffer.byteLength(csv) > target) csv = sampleCycles({ towns: towns(--count), cycles, lastValidFrom })
  return { csv, rows: count * cycles }
}

async function mixedLoad (url: string, seconds: number): Promise<{ requests: number, failures: number, ingests: number }> {
  const towns = loadSampleTowns()
  const paths = ['/v1/prices/latest', '/v1/towns', '/v1/prices?limit=100', '/v1/prices?limit=100&offset=1000',
    '/v1/prices?limit=1000', `/v1/prices/latest?town=${encodeURIComponent(towns[0] ?? 'Nairobi')}`, '/v1/prices?town=Nairobi']
  const end = Date.now() + seconds * 1000
  let requests = 0
  let failures = 0
  let ingests = 0
  const worker = async (w: number): Promise<void> => {
    for (let i = w; Date.now() < end; i++) {
      // Distinct client addresses: the rate limiter runs but never trips.
      const res = await rawGet(`${url}${paths[i % paths.length] ?? '/'}`, { 'x-forwarded-for': `10.1.${w}.${i % 250}` }).catch(() => undefined)
      requests++
      if (res?.status !== 200) failures++
    }
  }
  const ingester = async (): Promise<void> => {
    // Alternately re-uploads the current cycle with new prices and an older one unchanged.
    const current = cycleOf(todayInKenya())
    for (let n = 0; Date.now() < end; n++) {
      const [y, m] = current.validFrom.split('-').map(Number) as [number, number]
      const csv = sampleCycles({ towns, cycles: 1, lastValidFrom: cycleStartingIn(y * 12 + m - 1 - (n % 2 === 0 ? 0 : 5)).validFrom })
      const status = await ingest(url, n % 2 === 0 ? csv.replace(/,(\d+)\.(\d\d)\n/g, (_m, a: string, b: string) => `,${Number(a) + (n % 7) + 1}.${b}\n`) : csv)
      ingests++
      if (status !== 201) failures++
      await sleep(2000)
    }
  }
  await Promise.all([...Array.from({ length: 8 }, async (_, w) => await worker(w)), ingester()])
  return { requests, failures, ingests }
}

async function main (): Promise<void> {
  const secondsArg = process.argv.indexOf('--load-seconds')
  const seconds = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 20
  const dataDir = mkdtempSync(join(tmpdir(), 'fuel-pglite-mem-'))
  const mb = (n: number): string => `${(n / MB).toFixed(1)} MB`
  try {
    let server = await start(dataDir)
    console.log(`empty data directory: started in ${server.startMs} ms, RSS when ready ${mb(server.readyRss)}, idle ${mb(await idleRss(server.pid))} (peak so far ${mb(memory(server.pid).hwm)})`)
    await stop(server.child)
    const seedBegan = Date.now()
    await seed(dataDir)
    console.log(`seeded in ${Date.now() - seedBegan} ms`)
    server = await start(dataDir)
    console.log(`seeded data directory: started in ${server.startMs} ms, RSS when ready ${mb(server.readyRss)}, idle ${mb(await idleRss(server.pid))}`)
    const upload = largestUpload(loadSampleTowns(), MAX_UPLOAD_BYTES)
    const uploadBegan = Date.now()
    const status = await ingest(server.url, upload.csv)
    const afterUpload = memory(server.pid)
    console.log(`one ${mb(Buffer.byteLength(upload.csv))} upload (${upload.rows} rows, ${status}, ${Date.now() - uploadBegan} ms): RSS ${mb(afterUpload.rss)}, peak ${mb(afterUpload.hwm)}, idle 3 s later ${mb(await idleRss(server.pid))}`)
    const load = await mixedLoad(server.url, seconds)
    const after = memory(server.pid)
    console.log(`after ${seconds} s mixed load (${load.requests} reads, ${load.ingests} ingests, ${load.failures} failures): RSS ${mb(after.rss)}, peak ${mb(after.hwm)}`)
    console.log(`RSS idle 3 s after the load: ${mb(await idleRss(server.pid))}`)
    await stop(server.child)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
