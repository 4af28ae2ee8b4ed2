import { monitorEventLoopDelay } from 'node:perf_hooks'

/**
 * How long a read waits while the service (in this process) works on something else: requests one
 * after the other over a kept-alive socket for as long as `work` runs, and the event loop's own
 * delays, which count only this process's stalls, not a wait for a CPU the machine lends elsewhere
 * as a request's time does.
 */
export async function latenciesDuring<T> (url: string, work: () => Promise<T>): Promise<{ result: T, ms: number, latencies: number[], statuses: number[], loopDelayP99Ms: number }> {
  await (await fetch(url)).text() // the connection and the route warm
  let running = true
  const latencies: number[] = []
  const statuses = new Set<number>()
  const probing = (async () => {
    while (running) {
      const started = performance.now()
      const res = await fetch(url)
      await res.text()
      latencies.push(performance.now() - started)
      statuses.add(res.status)
    }
  })()
  const delays = monitorEventLoopDelay({ resolution: 10 })
  delays.enable()
  const started = performance.now()
  try {
    const result = await work()
    delays.disable()
    return { result, ms: performance.now() - started, latencies, statuses: [...statuses], loopDelayP99Ms: delays.percentile(99) / 1e6 }
  } finally {
    delays.disable()
    running = false
    await probing
  }
}
