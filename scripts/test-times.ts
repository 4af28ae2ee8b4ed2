/**
 * The time of each test file in the last tap run, slowest first, from the results tap keeps in
 * .tap/test-results (each file's TAP ends with `# time=…ms`, the wall time of its process).
 *
 *   npm run test:times          the ten slowest files of the last run
 *   npm run test:times -- 30    the thirty slowest ("all" for every file)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = join(ROOT, '.tap', 'test-results')

interface FileTime { file: string, ms: number, ok: boolean, modified: number }

export function readTimes (dir = RESULTS): FileTime[] {
  const times: FileTime[] = []
  const visit = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) { visit(path); continue }
      if (!entry.name.endsWith('.tap')) continue
      const text = readFileSync(path, 'utf8')
      // The file's own line is its last top-level `# time=` (subtests' are indented).
      const ms = [...text.matchAll(/^# time=([\d.]+)ms$/gm)].pop()?.[1]
      if (ms === undefined) continue
      times.push({
        file: relative(dir, path).replace(/\.tap$/, ''),
        ms: Number(ms),
        ok: !/^not ok /m.test(text),
        modified: statSync(path).mtimeMs
      })
    }
  }
  visit(dir)
  return times.sort((a, b) => b.ms - a.ms)
}

export function formatTimes (times: FileTime[], count: number): string {
  const shown = times.slice(0, count)
  const width = Math.max(...shown.map((t) => t.file.length), 4)
  const lines = shown.map((t) => `${(t.ms / 1000).toFixed(1).padStart(7)} s  ${t.file.padEnd(width)}${t.ok ? '' : '  (failed)'}`)
  const total = times.reduce((sum, t) => sum + t.ms, 0) / 1000
  lines.push(`${times.length} files; their times add up to ${total.toFixed(1)} s (files run in parallel, so the run took less)`)
  return lines.join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = process.argv[2] ?? '10'
  let times: FileTime[]
  try {
    times = readTimes()
  } catch {
    console.error('no results in .tap/test-results: run npm test (or npx tap FILE) first')
    process.exit(1)
  }
  // Files not run last time keep older results: only those written since the last run began
  // (test/support/before.ts notes when) are listed.
  let started = 0
  try {
    started = statSync(join(ROOT, '.tap', 'run-started')).mtimeMs
  } catch {
    started = 0 // no note of a run's start: every result is listed
  }
  const lastRun = times.filter((t) => t.modified >= started)
  console.log(formatTimes(lastRun, arg === 'all' ? lastRun.length : Number(arg)))
}
