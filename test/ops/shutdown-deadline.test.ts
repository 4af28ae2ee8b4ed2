import { spawn } from 'node:child_process'
import t from '../support/file-test.js'
import { builtDist, distFile } from '../support/dist.js'

/** D60: once a shutdown begins, the process ends by the deadline even when its main thread never returns. */

// The compiled module, as the server runs it.
const DEADLINE = distFile('shutdown-deadline.js')

async function run (body: string): Promise<{ code: number | null, signal: NodeJS.Signals | null, stderr: string }> {
  await builtDist()
  const child = spawn(process.execPath, ['--input-type=module', '-e', `import { armShutdownDeadline } from ${JSON.stringify(DEADLINE)}\n${body}`], {
    env: { PATH: process.env.PATH ?? '' }, // without tap's NODE_OPTIONS: no module hooks in a process that needs none
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  return await new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stderr })))
}

t.test('[D60] a main thread stuck in a loop is killed at the deadline, with one line saying so', async (t) => {
  const { code, signal, stderr } = await run('await armShutdownDeadline(300)\nfor (;;) {}')
  t.equal(code, null)
  t.equal(signal, 'SIGKILL')
  const lines = stderr.trim().split('\n')
  t.equal(lines.length, 1)
  t.match(JSON.parse(lines[0] as string), { level: 60, msg: 'shutdown did not finish within 300 ms: killed' })
})

t.test('[D60] the watchdog does not keep a process alive: it ends by itself with its own code', async (t) => {
  t.same(await run('await armShutdownDeadline(60_000)\nprocess.exitCode = 3'), { code: 3, signal: null, stderr: '' })
})
