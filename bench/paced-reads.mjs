/**
 * Reads at a fixed pace, in a process of their own (see upload-reads.ts): GET `url` every
 * `everyMs` ms, each timed from when it was due (open loop: a stalled server is not hidden by a
 * client waiting for it), until SIGTERM or `seconds` have passed; then one JSON line on stdout:
 * the latencies in ms, the failures by cause, and this process's own event-loop delay (p99, max),
 * so a reader can see the client was not what stalled. Plain JavaScript: no loader, a small heap.
 * Each request claims its own client address (172.16.0.0/12), so the limiter never trips.
 */
import http from 'node:http'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import process from 'node:process'
import { setTimeout } from 'node:timers'
import { URL } from 'node:url'

const [url, everyMs, seconds] = [new URL(process.argv[2]), Number(process.argv[3]), Number(process.argv[4] ?? Infinity)]
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
const latencies = []
const failures = {}
const fail = (what) => { failures[what] = (failures[what] ?? 0) + 1 }
let sent = 0

function read (due) {
  return new Promise((resolve) => {
    const n = sent++
    const request = http.get(url, { agent, headers: { 'x-forwarded-for': `172.${16 + ((n >>> 16) & 15)}.${(n >>> 8) & 255}.${n & 255}` } }, (res) => {
      res.resume()
      res.once('end', () => {
        if (res.statusCode === 200) latencies.push(performance.now() - due)
        else fail(String(res.statusCode))
        resolve()
      })
    })
    request.once('error', (err) => { fail(err.message); resolve() })
  })
}

let done = false
process.once('SIGTERM', () => { done = true })
if (Number.isFinite(seconds)) setTimeout(() => { done = true }, seconds * 1000)
const loop = monitorEventLoopDelay({ resolution: 1 })
loop.enable()
const pending = []
const start = performance.now()
for (let k = 0; !done; k++) {
  const due = start + k * everyMs
  const wait = due - performance.now()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  if (done) break
  pending.push(read(due))
}
loop.disable()
await Promise.all(pending)
agent.destroy()
process.stdout.write(JSON.stringify({ latencies, failures, loopP99Ms: loop.percentile(99) / 1e6, loopMaxMs: loop.max / 1e6 }) + '\n')
