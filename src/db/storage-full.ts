import { statfsSync } from 'node:fs'

const DISK_FULL = '53100'
/** A PGlite PANIC with less than a WAL segment (16 MiB) free is a full disk: its message does not say so. */
const WAL_SEGMENT_AND_MARGIN_BYTES = 17 * 1024 * 1024

/** Whether `err` or a cause says the disk is full: 53100, ENOSPC, or a PGlite PANIC short of space (D61). */
export function storageFull (err: unknown, dataDir?: string): boolean {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, severity } = e as { code?: unknown, severity?: unknown }
    if (code === DISK_FULL || code === 'ENOSPC') return true
    if (severity === 'PANIC' && dataDir !== undefined && freeBytes(dataDir) < WAL_SEGMENT_AND_MARGIN_BYTES) return true
  }
  return false
}

function freeBytes (dir: string): number {
  try {
    const { bavail, bsize } = statfsSync(dir)
    return bavail * bsize
  } catch {
    return Number.POSITIVE_INFINITY // not known to be short of space
  }
}
