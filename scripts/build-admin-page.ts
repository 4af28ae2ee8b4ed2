/** The admin page's build: its types are generated from openapi.yaml on every run, so a contract
 * change that breaks the page fails the type check (D55). `--noEmit`: type-check only.
 * Run through `npm run build`, or scripts/build-if-stale.mjs (npm start, and the tests through
 * test/support/dist.ts), which builds one at a time under its lock and only when a source changed. */
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const PAGE_SOURCES = join(root, 'src', 'admin', 'page')
const PAGE_TYPES = join(root, 'src', 'generated', 'admin-api.d.ts')
const OUT = join(root, 'dist', 'admin')

async function generatePageTypes (): Promise<void> {
  const ast = await openapiTS(pathToFileURL(join(root, 'openapi.yaml')))
  const header = '// GENERATED from openapi.yaml by scripts/build-admin-page.ts (openapi-typescript); git-ignored.\n'
  // Written aside and renamed into place: a compiler or linter reading the types meanwhile (in
  // CI's other lane) sees the old file or the new one, never half of one.
  const aside = `${PAGE_TYPES}.${process.pid}.tmp`
  writeFileSync(aside, header + astToString(ast))
  renameSync(aside, PAGE_TYPES)
}

function compile (args: string[]): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  const run = spawnSync(process.execPath, [tsc, '-p', join(PAGE_SOURCES, 'tsconfig.json'), ...args], { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`the admin page does not compile:\n${run.stdout}${run.stderr}`)
}

async function buildAdminPage (noEmit: boolean): Promise<void> {
  await generatePageTypes()
  if (noEmit) {
    compile(['--noEmit'])
    return
  }
  // Built in a folder beside the page's and each file renamed into place: a server serving the
  // page meanwhile sends the old file or the new one, never a half-written script.
  mkdirSync(dirname(OUT), { recursive: true })
  const staging = mkdtempSync(join(dirname(OUT), '.admin-build-'))
  try {
    compile(['--outDir', staging])
    for (const file of ['index.html', 'admin.css']) copyFileSync(join(PAGE_SOURCES, file), join(staging, file))
    // The page names its script; a build that did not write it is a broken page.
    if (!readFileSync(join(staging, 'index.html'), 'utf8').includes('/admin/admin.js')) throw new Error('index.html does not load /admin/admin.js')
    mkdirSync(OUT, { recursive: true })
    for (const file of readdirSync(staging)) renameSync(join(staging, file), join(OUT, file))
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

buildAdminPage(process.argv.includes('--noEmit')).catch((err: Error) => {
  console.error(err.message)
  process.exit(1)
})
