import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The project root (the folder holding package.json), whether the code runs from src/ under tsx
 * or from dist/src/ after the build: migrations (drizzle/) and sample data (scripts/sample/) are
 * found from there.
 */
export function projectRoot (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url))
    dir = parent
  }
  return dir
}
