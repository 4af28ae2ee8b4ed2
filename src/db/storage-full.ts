import { statfsSync } from 'node:fs'

/** PostgreSQL's `disk_full`: a table or index file could not grow. */
const DISK_FULL = '53100'
/**
 * PostgreSQL makes each new WAL segment (16 MiB) in one go; when the disk cannot hold it, PGlite
 * stops with a PANIC whose message is unrelated ("XLogBeginInsert was already called"). A PANIC
 * with less than a segment and a margin free on the data directory's disk is taken as a full disk.
 */
const WAL_SEGMENT_AND_MARGIN_BYTES = 17 * 1024 * 1024

/**
 * Whether `err` (or a cause of it) says the database's disk is full: PostgreSQL's 53100, Node's
 * ENOSPC, or a PGlite PANIC on a data directory (`dataDir`, on PGlite) short of space (D61).
 */
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
