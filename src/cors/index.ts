import fastifyCors from '@fastify/cors'
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { DEFAULT_CORS_ORIGINS } from '../config.js'
import { operations } from '../generated/openapi.js'

interface CorsPluginOptions {
  origins?: string[]
}

const EXPOSED_HEADERS = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, ETag'

/** Every method of the contract's operations, and the preflight's own OPTIONS: a browser may call any operation. */
const ALLOWED_METHODS = [...new Set([...Object.values(operations).map((o) => o.method), 'OPTIONS'])].join(', ')

/** @fastify/cors answers every OPTIONS before the rate limiter's hook, so a preflight is never counted. */
const corsPlugin: FastifyPluginAsync<CorsPluginOptions> = async (app, options) => {
  const origins = options.origins ?? DEFAULT_CORS_ORIGINS
  if (origins.some((o) => o.includes('*'))) throw new Error('cors: wildcard origins are not allowed')
  await app.register(fastifyCors, {
    origin: origins,
    methods: ALLOWED_METHODS,
    allowedHeaders: 'Authorization, Content-Type',
    exposedHeaders: EXPOSED_HEADERS,
    // An OPTIONS without the preflight headers gets a 204 too, never a text/plain 400 outside the envelope.
    strictPreflight: false
  })
}

export default fp(corsPlugin, { name: 'cors', fastify: '5.x' })
