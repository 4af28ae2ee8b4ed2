import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Registry } from 'prom-client'
import { buildApp, servicePlugins, type ServicePlugin } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { sampleCsv } from './ingest-write.js'

/**
 * One variant of the ablation (bench/ablation.ts): the service with the named plugins swapped
 * for empty stand-ins of the same name (so their dependants still start) and the ready lane on
 * or off, or, as `bare`, the
 * bytes the full service answers for GET /v1/prices/latest sent by a bare Fastify route or by
 * bare node:http. The store is an in-memory PGlite holding one ingested cycle: the latest cycle
 * is answered from the read cache (D44), so the database does no work during the load.
 * Prints {"port": n} when ready.
 */
type Variant = { swap: string[], lane: boolean } | { bare: 'fastify' | 'node:http' }
const variant = JSON.parse(process.argv[2] ?? '{"swap":[]}') as Variant

/** An empty plugin under `name`, with the decorators the service's other plugins use of it. */
function standIn (name: string): ServicePlugin {
  return {
    name,
    plugin: fp(async (app) => {
      if (name === 'rate-limit') app.decorate('rateLimit', () => (_request, _reply, done) => { done() })
      if (name === 'metrics') {
        const counter = { inc: () => {} }
        // A registry of its own, for what other plugins register in it (the read cache's tallies).
        app.decorate('metrics', { registry: new Registry(), ingests: counter, rowsIngested: counter, recorder: () => () => {} } as never)
      }
    }, { name })
  }
}

const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'warn', TRUST_PROXY: 'true', INGEST_TOKEN: 'ablation' })
const swap = new Set('swap' in variant ? variant.swap : [])
// The ready lane (D45) answers before every per-request plugin; the rows that measure those
// plugins turn it off, so that Fastify's path is what they measure.
const lane = 'lane' in variant && variant.lane
const app = await buildApp({
  config,
  plugins: servicePlugins({ config }).map((p) => swap.has(p.name)
    ? standIn(p.name)
    : p.name === 'ready-lane' ? { ...p, options: { ...p.options, enabled: lane } } : p)
})
const boundary = 'ablation-boundary'
const upload = await app.inject({
  method: 'POST',
  url: '/v1/ingest/csv',
  headers: { authorization: 'Bearer ablation', 'content-type': `multipart/form-data; boundary=${boundary}` },
  payload: Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cycle.csv"\r\nContent-Type: text/csv\r\n\r\n`),
    sampleCsv(1).csv,
    Buffer.from(`\r\n--${boundary}--\r\n`)
  ])
})
if (upload.statusCode !== 201) throw new Error(`ingest answered ${upload.statusCode}: ${upload.body}`)

const HOST = '127.0.0.1'
const listenFastify = async (f: FastifyInstance): Promise<number> => {
  await f.listen({ host: HOST, port: 0 })
  return (f.server.address() as AddressInfo).port
}

let port: number
if (!('bare' in variant)) {
  port = await listenFastify(app)
} else {
  const latest = await app.inject({ url: '/v1/prices/latest' })
  const body = latest.rawPayload
  const type = String(latest.headers['content-type'])
  await app.close()
  if (variant.bare === 'fastify') {
    const bare = Fastify()
    bare.get('/v1/prices/latest', (_request, reply) => { void reply.header('content-type', type).send(body) })
    port = await listenFastify(bare)
  } else {
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': type, 'content-length': body.length })
      response.end(body)
    })
    server.keepAliveTimeout = 72_000 // Fastify's default
    port = await new Promise((resolve) => server.listen(0, HOST, () => resolve((server.address() as AddressInfo).port)))
  }
}
console.log(JSON.stringify({ port }))
