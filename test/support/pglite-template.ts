import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The migrated embedded database, made once and loaded by every test file: initdb and the
 * migrations cost a PGlite process seconds of CPU, loading a dumped data directory a fraction of
 * that (test/README.md has the figures). The dump is keyed by PGlite's version, the migration files
 * and this file, so a new migration, a PGlite upgrade or a new recipe makes a new one; tap's
 * `before` script (test/support/before.ts) makes it ahead of the run, and a file run on its own
 * makes it under a lock, so parallel files never build it twice.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'fuel-price-service')
const MIGRATIONS = join(ROOT, 'drizzle')
/** A lock older than this was left by a killed process: building the dump takes seconds. */
const STALE_LOCK_MS = 120_000

/** The dump's file: one name per PGlite version, migration set and recipe. */
export function templatePath (): string {
  const hash = createHash('sha256')
  hash.update(readFileSync(join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json')))
  hash.update(readFileSync(fileURLToPath(import.meta.url))) // how the dump is made, below
  for (const file of listFiles(MIGRATIONS)) hash.update(file).update(readFileSync(join(MIGRATIONS, file)))
  return join(CACHE_DIR, `pglite-migrated-${hash.digest('hex').slice(0, 16)}.tar`)
}

let loaded: Promise<Blob> | undefined

/** The migrated data directory as a tar (PGlite's dumpDataDir), built first if it is not there. */
export async function pgliteTemplate (): Promise<Blob> {
  loaded ??= readOrBuild(templatePath())
  return await loaded
}

async function readOrBuild (file: string): Promise<Blob> {
  const lock = `${file}.lock`
  for (;;) {
    const ready = await readIfThere(file)
    if (ready !== undefined) return ready
    mkdirSync(CACHE_DIR, { recursive: true })
    try {
      mkdirSync(lock)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      // Another test process is building it: wait for the file, or take over a stale lock.
      if (Date.now() - mtimeOf(lock) > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true })
      await new Promise((resolve) => setTimeout(resolve, 100))
      continue
    }
    try {
      if (!existsSync(file)) await build(file)
    } finally {
      rmSync(lock, { recursive: true, force: true })
    }
  }
}

async function build (file: string): Promise<void> {
  // Loaded only here: a file that finds the dump (most runs) does not load the database code for it.
  const { createPglite, pgliteDatabase } = await import('../../src/db/client.js')
  const { migrateDatabase } = await import('../../src/db/migrate.js')
  const client = await createPglite('memory://')
  try {
    await migrateDatabase(await pgliteDatabase(client))
    // The service and the tests use the database `postgres` alone: without the two template
    // databases the dump is 25 MB, not 40, and each test file starts PGlite with it ~0.17 s of CPU sooner.
    await client.exec("UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')")
    await client.exec('DROP DATABASE template0')
    await client.exec('DROP DATABASE template1')
    // Written to disk now, so loading the dump starts without a crash recovery.
    await client.exec('CHECKPOINT')
    const dump = await client.dumpDataDir('none')
    const partial = `${file}.${process.pid}.partial`
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()))
    renameSync(partial, file) // whole or absent, for the readers that do not take the lock
  } finally {
    await client.close()
  }
}

/**
 * The file's bytes as PGlite's loadDataDir takes them (it only calls arrayBuffer()): a real Blob
 * would copy the dump twice more on the way (a fifth of a second per test file at 40 MB).
 */
async function readIfThere (file: string): Promise<Blob | undefined> {
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  const buffer = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
  return { type: 'application/x-tar', size: bytes.byteLength, arrayBuffer: async () => buffer } as unknown as Blob
}

function mtimeOf (path: string): number {
  try {
    return statSync(path).mtimeMs
  } catch {
    return Date.now()
  }
}

function listFiles (dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    .flatMap((entry) => entry.isDirectory() ? listFiles(dir, join(prefix, entry.name)) : [join(prefix, entry.name)])
}

/**
 * A DATA_DIR for a server or script process a test starts, holding the migrated template: the
 * process opens it as an existing database (no initdb child, migrations already applied), which
 * is what a restart of the service sees. Tests of a first start keep an empty directory.
 */
export async function seedDataDir (dataDir: string): Promise<string> {
  const tar = Buffer.from(await (await pgliteTemplate()).arrayBuffer())
  mkdirSync(dataDir, { recursive: true })
  // ustar, as PGlite's dumpDataDir writes it: 512-byte headers, each entry padded to 512 bytes.
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512)
    if (header.every((b) => b === 0)) break
    const field = (from: number, length: number): string => header.toString('latin1', from, from + length).replace(/\0.*$/s, '')
    const prefix = field(345, 155)
    const name = (prefix === '' ? '' : `${prefix}/`) + field(0, 100)
    const size = Number.parseInt(field(124, 12).trim() || '0', 8)
    const type = field(156, 1)
    const target = join(dataDir, name.replace(/^\/+/, ''))
    if (!target.startsWith(dataDir)) throw new Error(`template entry outside the data directory: ${name}`)
    if (type === '5') {
      mkdirSync(target, { recursive: true, mode: 0o700 })
    } else if (type === '0' || type === '') {
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
      writeFileSync(target, tar.subarray(at + 512, at + 512 + size), { mode: 0o600 })
    }
    at += 512 + Math.ceil(size / 512) * 512
  }
  return dataDir
}
