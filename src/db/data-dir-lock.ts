import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const LOCK_FILE = 'fuel-price-service.lock'

export class DataDirUnwritableError extends Error {
  constructor (readonly dataDir: string, readonly code: string, options: { cause: unknown }) {
    super(`DATA_DIR ${dataDir} is not writable (${code})`, options)
    this.name = 'DataDirUnwritableError'
  }
}

/** Another live process holds DATA_DIR: two PGlite instances on one directory corrupt it. */
export class DataDirInUseError extends Error {
  constructor (readonly dataDir: string, readonly pid: number) {
    super(`DATA_DIR ${dataDir} is in use by another running instance (pid ${pid})`)
    this.name = 'DataDirInUseError'
  }
}

export interface DataDirLock {
  readonly path: string
  release: () => void
}

/** A pid lock file in DATA_DIR, since PGlite takes no lock of its own; a dead holder's lock is taken over. */
export function lockDataDir (dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE)
  writable(dataDir, () => mkdirSync(dataDir, { recursive: true }))
  for (let attempt = 0; ; attempt++) {
    try {
      writable(dataDir, () => writeFileSync(path, `${process.pid}\n`, { flag: 'wx' }))
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err
    }
    const holder = lockHolder(path)
    if (holder !== undefined && holder !== process.pid && isRunning(holder)) throw new DataDirInUseError(dataDir, holder)
    // Stale: its process is gone (or it is ours: a restarted container often has the same pid).
    writable(dataDir, () => unlinkSync(path))
  }
  let held = true
  const release = (): void => {
    if (!held) return
    held = false
    process.off('exit', release)
    try {
      if (lockHolder(path) === process.pid) unlinkSync(path)
    } catch { /* already gone */ }
  }
  process.on('exit', release)
  return { path, release }
}

function writable (dataDir: string, step: () => void): void {
  try {
    step()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? ''
    if (['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'ENOSPC', 'EDQUOT'].includes(code) && !isLockExists(err, dataDir)) {
      throw new DataDirUnwritableError(dataDir, code, { cause: err })
    }
    throw err
  }
}

/** EEXIST on the lock file itself is the lock being held, not an unwritable directory. */
function isLockExists (err: unknown, dataDir: string): boolean {
  const e = err as NodeJS.ErrnoException
  return e.code === 'EEXIST' && e.path === join(dataDir, LOCK_FILE)
}

function lockHolder (path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10)
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

function isRunning (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
