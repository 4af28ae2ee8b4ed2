import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Counter } from 'prom-client'
import { changeTags } from '../http-caching/surrogate-keys.js'
import { PurgeClient, type PurgeClientOptions } from './purge-client.js'

declare module 'fastify' {
  interface FastifyInstance {
    cachePurge: CachePurge
  }
}

export interface CachePurge {
  /** Call once the change has committed and every replica's read cache is clear; waits a second at most, never rejects. */
  changed: (validFroms: Iterable<string>) => Promise<void>
}

export type CachePurgePluginOptions = Partial<Omit<PurgeClientOptions, 'log' | 'onOutcome'>>

/** Purge on publish: one PURGE of the affected tags per committed write (D70). */
async function cachePurge (app: FastifyInstance, options: CachePurgePluginOptions): Promise<void> {
  const { url } = options
  if (url === undefined) {
    app.decorate('cachePurge', { changed: async () => {} })
    return
  }
  const purges = new Counter({
    name: 'fuel_cache_purges_total',
    help: 'Purges of the shared cache (CACHE_PURGE_URL) by how they ended: delivered, refused (4xx), given_up after the retries, abandoned at shutdown.',
    labelNames: ['outcome'],
    registers: [app.metrics.registry]
  })
  const client = new PurgeClient({ ...options, url, log: app.log, onOutcome: (outcome) => purges.inc({ outcome }) })
  app.addHook('onClose', async () => { client.close() })
  app.decorate('cachePurge', { changed: async (validFroms) => { await client.purge(changeTags(validFroms)) } })
}

export default fp(cachePurge, { name: 'cache-purge', dependencies: ['metrics'] })
