import { readFileSync } from 'node:fs'
import Fastify from 'fastify'
import cors from '../src/cors/index.js'
import rateLimit from '../src/rate-limit/index.js'
import { DEFAULT_CORS_ORIGINS } from '../src/config.js'
import { MemorySlidingWindowStore } from '../src/rate-limit/memory-store.js'
import { ceilingKey, type RecordedResponse } from './protocol.js'

/** D45 design-card floor: bare Fastify, the service's cors and rate-limit wrappers, replayed bytes. */
const recorded = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as RecordedResponse[]

// Headers the two plugins set themselves on every answer.
const PLUGIN_HEADERS = /^(access-control-|ratelimit-|retry-after$)/

interface Ready { status: number, headers: Array<[string, string]>, body: Buffer | undefined }
const answers = new Map<string, Ready>()
for (const r of recorded) {
  const headers = Object.entries(r.headers).filter(([name]) => !PLUGIN_HEADERS.test(name))
  answers.set(r.key, { status: r.status, headers, body: r.status === 304 ? undefined : Buffer.from(r.bodyBase64, 'base64') })
}

const app = Fastify({ trustProxy: true })
await app.register(cors, { origins: DEFAULT_CORS_ORIGINS })
await app.register(rateLimit, { store: new MemorySlidingWindowStore() })
app.get('*', (request, reply) => {
  const answer = answers.get(ceilingKey(request.url, request.headers))
  if (answer === undefined) {
    void reply.code(404).send({ detail: 'not recorded' })
    return
  }
  for (const [name, value] of answer.headers) void reply.header(name, value)
  void reply.code(answer.status).send(answer.body)
})
await app.listen({ host: '127.0.0.1', port: 0 })
const address = app.server.address()
console.log(JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 }))
process.once('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
