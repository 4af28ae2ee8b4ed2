import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const made: string[] = []

/**
 * A new directory under the system's temporary folder, removed when this test process exits:
 * after every teardown, so a server started in it has stopped writing there. A seeded DATA_DIR is
 * tens of MB, and a run that left its directories behind filled /tmp by ~200 MB.
 */
export function tempDir (prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  if (made.length === 0) process.once('exit', () => { for (const each of made) rmSync(each, { recursive: true, force: true }) })
  made.push(dir)
  return dir
}
