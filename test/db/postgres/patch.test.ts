import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from '../../support/file-test.js'
import { paced } from '../../support/pace.js'
import { TEST_POSTGRES_URL, needs } from '../../services.js'

/**
 * D47: the patch of postgres.js (patches/, applied by `npm install`) is proven on the two faults
 * it guards, each reproduced deterministically against real PostgreSQL: once against the
 * installed (patched) driver, once against a copy with the patch taken out again.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const SCRIPT = fileURLToPath(new URL('_faults.mjs', import.meta.url))
const installed = join(ROOT, 'node_modules', 'postgres')
const patchFile = readdirSync(join(ROOT, 'patches')).find((f) => f.startsWith('postgres+'))

/** Takes a unified diff's hunks out of the files under `dir` (what `patch -R` does, exactly). */
function unpatch (dir: string, diff: string): void {
  for (const file of diff.split(/^diff --git /m).slice(1)) {
    const path = join(dir, (/^a\/node_modules\/postgres\/(\S+)/.exec(file)?.[1]) ?? '')
    let text = readFileSync(path, 'utf8')
    for (const hunk of file.split(/^@@.*@@.*\n/m).slice(1)) {
      const lines = hunk.replace(/\n$/, '').split('\n')
      const before = lines.filter((l) => !l.startsWith('+')).map((l) => l.slice(1)).join('\n')
      const after = lines.filter((l) => !l.startsWith('-')).map((l) => l.slice(1)).join('\n')
      if (!text.includes(after)) throw new Error(`${path}: patched text not found`)
      text = text.replace(after, before)
    }
    writeFileSync(path, text)
  }
}

const run = async (moduleDir: string, scenario: string): Promise<{ code: number, out: string }> =>
  await new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, moduleDir, scenario, TEST_POSTGRES_URL], { timeout: paced(30_000) }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, out: `${stdout}${stderr}` })
    })
  })

t.test('postgres.js with and without the patch', await needs('postgres'), async (t) => {
  t.ok(patchFile, 'a patch of postgres.js is carried in patches/')
  const copy = mkdtempSync(join(tmpdir(), 'postgres-unpatched-'))
  t.teardown(() => rmSync(copy, { recursive: true, force: true }))
  cpSync(installed, copy, { recursive: true })
  unpatch(copy, readFileSync(join(ROOT, 'patches', patchFile ?? ''), 'utf8'))
  t.not(readFileSync(join(copy, 'src/connection.js'), 'utf8'), readFileSync(join(installed, 'src/connection.js'), 'utf8'), 'the copy differs from the installed driver')

  const crash = await run(copy, 'closed-write')
  t.equal(crash.code, 1, 'unpatched: a query on a reserved connection whose backend is gone ends the process')
  t.match(crash.out, "TypeError: Cannot read properties of null (reading 'write')", 'with the reported error')
  t.same(await run(installed, 'closed-write'), { code: 0, out: 'rejected CONNECTION_CLOSED\n' }, 'patched: the query is rejected and the process lives')

  const wedge = await run(copy, 'error-then-query')
  t.equal(wedge.out, 'rejected CONNECTION_CLOSED; no answer within 3 s\n', 'unpatched: after a socket error in a transaction, the pool slot never answers again')
  t.same(await run(installed, 'error-then-query'), { code: 0, out: 'rejected CONNECTION_CLOSED; answered 1 and 2\n' }, 'patched: the next queries are answered')
})
