import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Counter, Gauge } from 'prom-client'
import { ReadCache } from './read-cache.js'

declare module 'fastify' {
  interface FastifyInstance {
    readCache: ReadCache
  }
}

interface ReadCachePluginOptions {
  maxBytes: number
}

/** Every read's answer kept in memory until the next write, as `app.readCache`. */
async function readCache (app: FastifyInstance, options: ReadCachePluginOptions): Promise<void> {
  const cache = new ReadCache({
    loadLatest: async () => await app.prices.latestPrices(),
    maxBytes: options.maxBytes
  })
  app.decorate('readCache', cache)

  const registers = [app.metrics.registry]
  const tallies: Array<[name: string, help: string, read: () => number]> = [
    ['fuel_latest_cache_hits_total', 'GET /v1/prices/latest answers served from the in-memory cache.', () => cache.latestHits],
    ['fuel_latest_cache_misses_total', 'GET /v1/prices/latest answers that had to read the database.', () => cache.latestMisses],
    ['fuel_read_cache_hits_total', 'Other cached reads (/v1/prices pages, /v1/towns) served from memory.', () => cache.otherHits],
    ['fuel_read_cache_misses_total', 'Other cached reads that had to read the database.', () => cache.otherMisses]
  ]
  for (const [name, help, read] of tallies) {
    new Counter({ name, help, registers, collect () { this.reset(); this.inc(read()) } })
  }
  new Gauge({
    name: 'fuel_read_cache_bytes',
    help: 'Bytes of the cached bodies besides the latest cycle (bounded by READ_CACHE_MAX_BYTES).',
    registers,
    collect () { this.set(cache.bytes) }
  })
}

export default fp(readCache, { name: 'read-cache', dependencies: ['prices-repository', 'metrics'] })
