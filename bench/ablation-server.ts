import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Registry } from 'prom-client'
import { buildApp, servicePlugins, type ServicePlugin } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import corsPlugin from '../src/cors/index.js'
import rateLimitPlugin from '../src/rate-limit/index.js'
import { MemorySlidingWindowStore } from '../src/rate-limit/memory-store.js'
import { sampleCsv } from './ingest-write.js'

/**
 * One variant of bench/ablation.ts: the service with the named plugins stubbed out, or (`bare`) its
 * latest-prices bytes sent by the design-card floor, bare Fastify or bare node:http. The read cache
 * answers (D44 every read served from memory), so the database does no work. Prints {"port": n}.
 */
type Variant = { swap: string[] } | { bare: 'floor' | 'fastify' | 'node:http' }
const variant = JSON.parse(process.argv[2] ?? '{"swap":[]}') as Variant

/** An empty plugin under `name`, with the decorators the service's other plugins use of it. */
function standIn (name: string): ServicePlugin {
  return {
    name,
    plugin: fp(async (app) => {
      if (name === 'rate-limit') app.decorate('rateLimit', () => async () => {})
      if (name === 'metrics') {
        const counter = { inc: () => {} }
        // A registry of its own, for what other plugins register in it (the read cache's tallies).
        app.decorate('metrics', { registry: new Registry(), ingests: counter, rowsIngested: counter, unmatchedHook: (_q: unknown, _r: unknown, payload: unknown, done: (e: null, p: unknown) => void) => { done(null, payload) } } as never)
      }
    }, { name })
  }
}

const config = loadConfig({ DATA_DIR: 'memory://', TRUST_PROXY: 'true', INGEST_TOKEN: 'ablation' })
const swap = new Set('swap' in variant ? variant.swap : [])
const app = await buildApp({
  config,
  // The default level; lines go to stderr, as stdout carries the port to the runner.
  logger: { level: config.logLevel, stream: process.stderr },
  plugins: servicePlugins({ config }).map((p) => swap.has(p.name) ? standIn(p.name) : p)
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
  // The service's headers but those the server or the two plugins write themselves.
  const own = Object.entries(latest.headers)
    .filter(([name]) => !/^(date|connection|keep-alive|content-length|access-control-|ratelimit-)/.test(name))
    .map(([name, value]) => [name, String(value)] as const)
  await app.close()
  if (variant.bare !== 'node:http') {
    const bare = Fastify({ trustProxy: true })
    if (variant.bare === 'floor') {
      // D45 the design-card floor: the service's own CORS and limiter wrappers, same options and store.
      await bare.register(corsPlugin, { origins: config.corsOrigins })
      await bare.register(rateLimitPlugin, { store: new MemorySlidingWindowStore() })
    }
    bare.get('/v1/prices/latest', (_request, reply) => {
      for (const [name, value] of own) void reply.header(name, value)
      void reply.send(body)
    })
    port = await listenFastify(bare)
  } else {
    const server = createServer((_request, response) => {
      response.writeHead(200, { ...Object.fromEntries(own), 'content-length': body.length })
      response.end(body)
    })
    server.keepAliveTimeout = 72_000 // Fastify's default
    port = await new Promise((resolve) => server.listen(0, HOST, () => resolve((server.address() as AddressInfo).port)))
  }
}
console.log(JSON.stringify({ port }))
