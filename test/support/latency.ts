/**
 * D57: how long a read waits while the service works on something else. Requests go one after
 * the other over a kept-alive socket (Node's fetch) for as long as `work` runs; each one's time
 * from sending to its last byte is kept.
 */
export async function latenciesDuring<T> (url: string, work: () => Promise<T>): Promise<{ result: T, ms: number, latencies: number[], statuses: number[] }> {
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
  const started = performance.now()
  try {
    const result = await work()
    return { result, ms: performance.now() - started, latencies, statuses: [...statuses] }
  } finally {
    running = false
    await probing
  }
}
