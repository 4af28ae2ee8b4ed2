import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * openapi.yaml as an object, for the response check every test file's app gets. Parsing the YAML
 * costs a test process most of a second, so the parsed document is kept as JSON next to the
 * PGlite template, under the hash of the YAML it came from: an edited contract is parsed again.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'fuel-price-service')

let document: Record<string, any> | undefined

export function openApiDocument (): Record<string, any> {
  if (document !== undefined) return document
  const text = readFileSync(join(ROOT, 'openapi.yaml'), 'utf8')
  const cached = join(CACHE_DIR, `openapi-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.json`)
  try {
    document = JSON.parse(readFileSync(cached, 'utf8')) as Record<string, any>
  } catch {
    // Loaded only here: the yaml package is itself a noticeable part of a test process's start.
    const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml')
    document = parse(text) as Record<string, any>
    mkdirSync(CACHE_DIR, { recursive: true })
    const partial = `${cached}.${process.pid}.partial`
    writeFileSync(partial, JSON.stringify(document))
    renameSync(partial, cached) // whole or absent for a parallel reader
  }
  return document
}
