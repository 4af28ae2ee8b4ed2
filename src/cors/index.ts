import fastifyCors from '@fastify/cors'
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { DEFAULT_CORS_ORIGINS } from '../config.js'

interface CorsPluginOptions {
  origins?: string[]
}

/** D22 rate-limit headers (and ETag) that browsers may read. */
export const EXPOSED_HEADERS = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, ETag'

/** D24 CORS origins via @fastify/cors; its onRequest hook answers every OPTIONS before the limiter (D22). */
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
