/**
 * The admin page (D55): types from openapi.yaml by openapi-typescript, then admin.ts compiled
 * against them by tsc, and the page copied beside it.
 *
 *   tsx scripts/build-admin-page.ts            build into dist/admin (part of `npm run build`)
 *   tsx scripts/build-admin-page.ts --noEmit   type-check only (part of `npm run typecheck`)
 *
 * The types are generated on every run into a git-ignored file, so they always follow the
 * contract: a change to openapi.yaml that breaks the page fails the type check.
 */
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const PAGE_SOURCES = join(root, 'src', 'admin', 'page')
export const PAGE_TYPES = join(root, 'src', 'generated', 'admin-api.d.ts')
const DEFAULT_OUT = join(root, 'dist', 'admin')

/** openapi.yaml → PAGE_TYPES (`paths`, `components`, …). */
export async function generatePageTypes (): Promise<void> {
  const ast = await openapiTS(pathToFileURL(join(root, 'openapi.yaml')))
  const header = '// GENERATED from openapi.yaml by scripts/build-admin-page.ts (openapi-typescript); git-ignored.\n'
  writeFileSync(PAGE_TYPES, header + astToString(ast))
}

/** Type-checks the page and, unless `noEmit`, writes index.html, admin.js and admin.css to `outDir`. */
export async function buildAdminPage (options: { outDir?: string, noEmit?: boolean } = {}): Promise<void> {
  await generatePageTypes()
  const outDir = options.outDir ?? DEFAULT_OUT
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  const args = [tsc, '-p', join(PAGE_SOURCES, 'tsconfig.json'), ...(options.noEmit === true ? ['--noEmit'] : ['--outDir', outDir])]
  const run = spawnSync(process.execPath, args, { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`the admin page does not compile:\n${run.stdout}${run.stderr}`)
  if (options.noEmit === true) return
  mkdirSync(outDir, { recursive: true })
  for (const file of ['index.html', 'admin.css']) copyFileSync(join(PAGE_SOURCES, file), join(outDir, file))
  // The page names its script; a build that did not write it is a broken page.
  if (!readFileSync(join(outDir, 'index.html'), 'utf8').includes('/admin/admin.js')) throw new Error('index.html does not load /admin/admin.js')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildAdminPage({ noEmit: process.argv.includes('--noEmit') }).catch((err: Error) => {
    console.error(err.message)
    process.exit(1)
  })
}
