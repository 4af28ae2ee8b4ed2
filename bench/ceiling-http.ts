import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { ceilingKey, type RecordedResponse } from './protocol.js'

/** The HTTP ceiling: bare node:http replaying the bytes and headers the service answered each request with. */
const recorded = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as RecordedResponse[]

interface Ready { status: number, headers: Record<string, string>, body: Buffer }
const answers = new Map<string, Ready>()
for (const r of recorded) {
  const body = Buffer.from(r.bodyBase64, 'base64')
  const headers = { ...r.headers }
  if (r.status !== 304) headers['content-length'] = String(body.length)
  answers.set(r.key, { status: r.status, headers, body })
}
const missing = Buffer.from('{"detail":"not recorded"}')

const server = createServer((req, res) => {
  const answer = answers.get(ceilingKey(req.url ?? '', req.headers))
  if (answer === undefined) {
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': String(missing.length) })
    res.end(missing)
    return
  }
  res.writeHead(answer.status, answer.headers)
  res.end(answer.status === 304 ? undefined : answer.body)
})
// Fastify's default, so idle keep-alive connections are treated alike.
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  console.log(JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 }))
})
process.once('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)) })
