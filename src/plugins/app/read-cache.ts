import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ReadCache } from '../../cache/read-cache.js'

declare module 'fastify' {
  interface FastifyInstance {
    readCache: ReadCache
  }
}

interface ReadCachePluginOptions {
  /** READ_CACHE_MAX_BYTES: bound on the cached bodies besides the latest cycle. */
  maxBytes: number
}

/** `app.readCache`: every read answered from memory between ingests (spec 4.2 rule 6, widened; D44). */
async function readCache (app: FastifyInstance, options: ReadCachePluginOptions): Promise<void> {
  app.decorate('readCache', new ReadCache({
    loadLatest: async () => await app.prices.latestPrices(),
    maxBytes: options.maxBytes
  }))
}

export default fp(readCache, { name: 'read-cache', dependencies: ['prices-repository'] })
