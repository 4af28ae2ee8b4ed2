import fp from 'fastify-plugin'
import cors from '@fastify/cors'
import type { FastifyPluginAsync } from 'fastify'
import { DEFAULT_CORS_ORIGINS } from '../../config.js'

interface CorsPluginOptions {
  /** Exact origins, e.g. `https://fuelkenya.com` (D24); normally `config.corsOrigins`. */
  origins?: string[]
}

/** D22: browsers may only read these response headers of a cross-origin response if listed. */
const EXPOSED_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'ETag']

/**
 * D24 over @fastify/cors. The allow-list is passed as an array of strings, which the plugin
 * compares with `===` against the request's Origin and echoes back only on a match; any other
 * origin gets no Access-Control-Allow-Origin (and `Vary: Origin` keeps caches from mixing them).
 *
 * Its hook is an instance-level onRequest hook, so it runs before the route-level rate-limit
 * hook: the headers are set before a 429 can be thrown (D22), and preflights are answered (204)
 * inside the hook before the limiter or any authentication runs.
 */
const corsPlugin: FastifyPluginAsync<CorsPluginOptions> = async (app, options) => {
  const origins = [...(options.origins ?? DEFAULT_CORS_ORIGINS)]
  // @fastify/cors turns an array containing '*' into "allow every origin"; D24 has no wildcard.
  if (origins.some((o) => o.includes('*'))) throw new Error('cors: wildcard origins are not allowed (D24)')

  await app.register(cors, {
    origin: origins,
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    exposedHeaders: EXPOSED_HEADERS,
    hook: 'onRequest',
    // With strictPreflight (the default) an OPTIONS request lacking Origin or
    // Access-Control-Request-Method gets a text/plain 400 "Invalid Preflight Request", which
    // breaks D19's single {"detail": ...} envelope. Without it such a request gets the same 204
    // as a preflight; a 204 carries no Access-Control-Allow-Origin unless the origin is allowed.
    strictPreflight: false
  })
}

export default fp(corsPlugin, { name: 'cors', fastify: '5.x' })
