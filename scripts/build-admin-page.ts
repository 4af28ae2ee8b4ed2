/** D55 admin page: its types are generated from openapi.yaml on every run, so a contract change
 * that breaks the page fails the type check. `--noEmit`: type-check only. */
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

export async function generatePageTypes (): Promise<void> {
  const ast = await openapiTS(pathToFileURL(join(root, 'openapi.yaml')))
  const header = '// GENERATED from openapi.yaml by scripts/build-admin-page.ts (openapi-typescript); git-ignored.\n'
  writeFileSync(PAGE_TYPES, header + astToString(ast))
}

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
