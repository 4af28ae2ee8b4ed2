import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { HttpVariants, RecordedResponse } from './protocol.js'

/**
 * The ceiling of the /v1/prices/latest scenarios: a bare node:http server that answers with the
 * bytes the service answered (recorded by the runner), with the same representation headers. No
 * framework, no routing table, no limiter: what Node itself costs to send those bytes.
 */
const recorded = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as HttpVariants

interface Ready { status: number, headers: Record<string, string>, body: Buffer }
const ready = (r: RecordedResponse): Ready => {
  const body = Buffer.from(r.bodyBase64, 'base64')
  const headers = { ...r.headers }
  if (r.status !== 304) headers['content-length'] = String(body.length)
  return { status: r.status, headers, body }
}
const all = ready(recorded.all)
const town = ready(recorded.town)
const gzip = ready(recorded.gzip)
const notModified = ready(recorded.notModified)

const server = createServer((req, res) => {
  // The few header checks the service's scenarios differ by, cheapest first.
  const pick = req.headers['if-none-match'] !== undefined
    ? notModified
    : (req.url ?? '').includes('town=')
        ? town
        : (req.headers['accept-encoding'] ?? '').includes('gzip') ? gzip : all
  res.writeHead(pick.status, pick.headers)
  res.end(pick.status === 304 ? undefined : pick.body)
})
// Fastify's default, so idle keep-alive connections are treated alike.
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  console.log(JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 }))
})
process.once('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)) })
