import fastifyCors from '@fastify/cors'
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { DEFAULT_CORS_ORIGINS } from '../config.js'

interface CorsPluginOptions {
  /** Exact origins, e.g. `https://fuelkenya.com`; normally `config.corsOrigins`. */
  origins?: string[]
}

/** D22 browsers may read only the response headers listed here. */
export const EXPOSED_HEADERS = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, ETag'

/**
 * D24 exact-origin CORS through @fastify/cors: every answer says `Vary: Origin` and lists the
 * exposed headers; an allowed Origin is echoed, any other gets no Allow-Origin. Every OPTIONS
 * request is a preflight answered 204 in the plugin's onRequest hook, which runs before the
 * limiter's route-level hook: preflights are never counted (D22) nor authenticated.
 */
const corsPlugin: FastifyPluginAsync<CorsPluginOptions> = async (app, options) => {
  const origins = options.origins ?? DEFAULT_CORS_ORIGINS
  if (origins.some((o) => o.includes('*'))) throw new Error('cors: wildcard origins are not allowed (D24)')
  await app.register(fastifyCors, {
    origin: origins,
    methods: 'GET, POST, OPTIONS',
    allowedHeaders: 'Authorization, Content-Type',
    exposedHeaders: EXPOSED_HEADERS,
    // A 204 with or without the preflight headers, never a text/plain 400 (D19 envelope).
    strictPreflight: false
  })
}

export default fp(corsPlugin, { name: 'cors', fastify: '5.x' })
