import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, statfsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A real, small file system to run out of: a tmpfs (root only; see `needs('tmpfs')`). */
export interface Tmpfs {
  dir: string
  /** Bytes in use on it. */
  used: () => number
  /** Changes its size in place (what is stored stays). */
  resize: (bytes: number) => void
  unmount: () => void
}

export function mountTmpfs (bytes: number): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), 'fuel-full-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kib(bytes)}k`, 'tmpfs', dir])
  return {
    dir,
    used: () => {
      const { blocks, bfree, bsize } = statfsSync(dir)
      return (blocks - bfree) * bsize
    },
    resize: (size) => { execFileSync('mount', ['-o', `remount,size=${kib(size)}k`, dir]) },
    unmount: () => {
      execFileSync('umount', ['-l', dir])
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

function kib (bytes: number): number {
  return Math.ceil(bytes / 1024)
}
