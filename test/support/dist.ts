import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The compiled service, as `npm start` and the image run it: tests that start the server (or one
 * of its modules) as a process of its own start it from dist/, which costs a third of the CPU of
 * a start from source through a TypeScript loader. dist/ is brought up to date first by the same
 * step `npm start` runs (scripts/build-if-stale.mjs): nothing when no source changed, otherwise
 * an incremental build, one at a time across the test processes that ask at once.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** A file of dist/ by its path under src/, e.g. `distFile('server.js')`. */
export function distFile (path: string): string {
  return join(ROOT, 'dist', 'src', path)
}

let built: Promise<void> | undefined

/** Resolves once dist/ is up to date with the sources (checked once per test process). */
export async function builtDist (): Promise<void> {
  built ??= new Promise<void>((resolve, reject) => {
    // Only what the build needs: no tap hooks nor coverage in the compiler's process.
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'build-if-stale.mjs')], {
      cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: ['ignore', 'pipe', 'pipe']
    })
    let output = ''
    child.stdout.on('data', (d: Buffer) => { output += d.toString() })
    child.stderr.on('data', (d: Buffer) => { output += d.toString() })
    child.once('error', reject)
    child.once('close', (code) => {
      if (code === 0) resolve()
      else reject(new Error(`scripts/build-if-stale.mjs exited with ${String(code)}:\n${output}`))
    })
  })
  await built
}

/** `node dist/src/server.js`'s arguments, once dist/ is up to date. */
export async function serverArgs (): Promise<string[]> {
  await builtDist()
  return [distFile('server.js')]
}
