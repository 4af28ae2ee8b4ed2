/** PGlite's memory settings, and initdb in a short-lived child process (D36). */
import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync, realpathSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const SELF = fileURLToPath(import.meta.url)

/** PostgreSQL settings chosen for memory, since PGlite's WebAssembly heap never shrinks; durability untouched. */
const PGLITE_MEMORY_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: '16MB', // the whole data set (~3,000 rows a year) fits many times over
  wal_buffers: '512kB',
  min_wal_size: '32MB',
  max_wal_size: '64MB', // checkpoint at most every 64 MB of WAL: a short crash recovery
  work_mem: '4MB',
  maintenance_work_mem: '16MB', // index builds (migrations) never take the heap past this
  temp_buffers: '1MB'
}

export function pgliteStartParams (defaults: readonly string[]): string[] {
  return [...defaults, ...Object.entries(PGLITE_MEMORY_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`])]
}

export async function initPgliteDataDir (dataDir: string): Promise<void> {
  // Staged inside dataDir, then moved up with PG_VERSION last: an interrupted creation never looks complete.
  const staging = join(dataDir, STAGING)
  try {
    mkdirSync(dataDir, { recursive: true })
    rmSync(staging, { recursive: true, force: true })
    await runInitdbChild(staging)
    const names = readdirSync(staging).sort((a, b) => Number(a === 'PG_VERSION') - Number(b === 'PG_VERSION'))
    for (const name of names) renameSync(join(staging, name), join(dataDir, name))
    rmSync(staging, { recursive: true, force: true })
  } catch (err) {
    const message = (err as Error).message.trim().split('\n').filter((l) => l.trim() !== '').pop() ?? 'unknown error'
    throw new Error(`could not create the PGlite data directory ${dataDir}: ${message}`)
  }
}

const STAGING = '.initdb'

async function runInitdbChild (dir: string): Promise<void> {
  // execArgv carries a loader such as tsx, so SELF runs as it was loaded; --liftoff-only makes initdb faster.
  const args = [...process.execArgv, '--liftoff-only', SELF, dir]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', resolve)
  })
  if (code !== 0) throw new Error(stderr.trim() !== '' ? stderr : `initdb child exited with ${String(code)}`)
}

async function main (dataDir: string): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite')
  // create() runs initdb and a first start; close() ends it with a shutdown checkpoint.
  const pg = await PGlite.create(dataDir, { startParams: pgliteStartParams(PGlite.defaultStartParams) })
  await pg.close()
}

if (process.argv[1] !== undefined && pathToFileURL(realpathSync(process.argv[1])).href === pathToFileURL(realpathSync(SELF)).href) {
  const dataDir = process.argv[2]
  if (dataDir === undefined) {
    console.error('usage: pglite-initdb DATA_DIR')
    process.exitCode = 2
  } else {
    try {
      await main(dataDir)
    } catch (err) {
      console.error((err as Error).message)
      process.exitCode = 1
    }
  }
}
