import { Worker } from 'node:worker_threads'

// Runs in a thread of its own, so a main thread stuck in a synchronous loop cannot hold it up.
const WATCHDOG = `
const { workerData } = require('node:worker_threads')
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.ms)
try { require('node:fs').writeSync(2, workerData.line) } catch {}
process.kill(workerData.pid, 'SIGKILL')
`

const START_WAIT_MS = 1000

/** SIGKILLs this process `ms` from now unless it has exited, so a begun shutdown ends in time (D60).
 * Resolves once the watchdog's thread runs: an exit while a thread starts can abort Node 20. */
export async function armShutdownDeadline (ms: number): Promise<void> {
  const line = `{"level":60,"time":${Date.now() + ms},"pid":${process.pid},"msg":"shutdown did not finish within ${ms} ms: killed"}\n`
  const worker = new Worker(WATCHDOG, { eval: true, execArgv: [], workerData: { ms, pid: process.pid, line } })
  worker.unref() // an exit in time is not held up by the watchdog
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, START_WAIT_MS)
    const done = (): void => { clearTimeout(timer); resolve() }
    worker.once('online', done)
    worker.once('error', done)
  })
}
