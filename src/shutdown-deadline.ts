import { Worker } from 'node:worker_threads'

// Runs in a thread of its own, so a main thread stuck in a synchronous loop cannot hold it up.
const WATCHDOG = `
const { workerData } = require('node:worker_threads')
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.ms)
try { require('node:fs').writeSync(2, workerData.line) } catch {}
process.kill(workerData.pid, 'SIGKILL')
`

/**
 * Ends this process with SIGKILL `ms` from now unless it has exited by then (D60): whatever its
 * logger, a lost terminal or a stuck request does, a shutdown that has begun ends in time.
 */
export function armShutdownDeadline (ms: number): void {
  const line = `{"level":60,"time":${Date.now() + ms},"pid":${process.pid},"msg":"shutdown did not finish within ${ms} ms: killed"}\n`
  const worker = new Worker(WATCHDOG, { eval: true, execArgv: [], workerData: { ms, pid: process.pid, line } })
  worker.unref() // an exit in time is not held up by the watchdog
}
