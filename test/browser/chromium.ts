import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CHROMIUM_PATH } from '../services.js'
import { paced } from '../support/pace.js'

/**
 * Headless Chromium for browser-level tests (a real CORS check, a page that calls the API).
 * Each run gets a fresh profile directory, so no cache, cookie or preflight cache leaks between
 * tests. `--virtual-time-budget` lets the page's scripts and fetches settle before the dump.
 */
export const CHROMIUM = CHROMIUM_PATH

export interface ChromiumOptions {
  /** Wall-clock limit for the whole browser run; the process group is killed after it. */
  timeoutMs?: number
  /** Virtual time the page gets to run timers and network before the dump (ms). */
  virtualTimeBudgetMs?: number
}

const BASE_FLAGS = [
  '--headless',
  '--no-sandbox', // the test machine runs as root in a container: the sandbox cannot start there
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run'
]

/** The page's DOM after its scripts ran, as Chromium serialises it. */
export async function dumpDom (url: string, options: ChromiumOptions = {}): Promise<string> {
  return runChromium(['--dump-dom', url], options)
}

/** A run cut off at its `timeoutMs`, told apart from a browser that failed. */
class TimedOut extends Error {}

/**
 * Saves a 1280×2000 PNG of the page to `file`. Headless Chromium's screenshot can hang where a DOM
 * dump of the same page has just finished (seen once, in CI on a slow host), so a run that
 * outlasts `timeoutMs` gets one more try rather than one long wait.
 */
export async function screenshot (url: string, file: string, options: ChromiumOptions = {}): Promise<void> {
  const args = [`--screenshot=${file}`, '--window-size=1280,2000', url]
  await runChromium(args, options).catch(async (err: unknown) => {
    if (!(err instanceof TimedOut)) throw err
    console.error(`${err.message}; trying once more`)
    await runChromium(args, options)
  })
}

async function runChromium (args: string[], options: ChromiumOptions): Promise<string> {
  const timeoutMs = paced(options.timeoutMs ?? 30_000)
  const profile = await mkdtemp(join(tmpdir(), 'chromium-test-'))
  try {
    return await new Promise<string>((resolve, reject) => {
      // detached: Chromium forks helpers (zygote, renderer); on timeout the whole group goes.
      const child = spawn(CHROMIUM, [
        ...BASE_FLAGS,
        `--user-data-dir=${profile}`,
        `--virtual-time-budget=${options.virtualTimeBudgetMs ?? 10_000}`,
        ...args
      ], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
      const stdout: Buffer[] = []
      const stderr: Buffer[] = []
      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
      child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        killGroup(child.pid)
      }, timeoutMs)
      child.on('error', (err) => {
        clearTimeout(timer)
        reject(err)
      })
      child.on('close', (code, signal) => {
        clearTimeout(timer)
        killGroup(child.pid) // leftover helpers of an exited browser
        if (timedOut) {
          reject(new TimedOut(`chromium timed out after ${timeoutMs} ms: ${args.join(' ')}`))
        } else if (code !== 0) {
          const tail = Buffer.concat(stderr).toString('utf8').slice(-2000)
          reject(new Error(`chromium exited with ${code ?? signal}: ${tail}`))
        } else {
          resolve(Buffer.concat(stdout).toString('utf8'))
        }
      })
    })
  } finally {
    await rm(profile, { recursive: true, force: true, maxRetries: 3 })
  }
}

/** Kills the process group this helper started (by its own id), ignoring one that is gone. */
function killGroup (pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // already exited
  }
}
