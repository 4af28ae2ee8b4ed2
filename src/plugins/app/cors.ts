import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { DEFAULT_CORS_ORIGINS } from '../../config.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** D24's decision for one Origin: the `Access-Control-Allow-Origin` to send, or undefined (the ready lane, D45). */
    allowedOrigin: (origin: string | undefined) => string | undefined
  }
}

interface CorsPluginOptions {
  /** Exact origins, e.g. `https://fuelkenya.com` (D24); normally `config.corsOrigins`. */
  origins?: string[]
}

/** D22: browsers may only read these response headers of a cross-origin response if listed. */
export const EXPOSED_HEADERS = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, ETag'
/** D24: what a preflight may ask for. */
const ALLOWED_METHODS = 'GET, POST, OPTIONS'
const ALLOWED_HEADERS = 'Authorization, Content-Type'

/**
 * D24, our own hook (it replaced @fastify/cors, whose per-request hook spreads its options into a
 * new object, reads `request.routeOptions` twice and joins the exposed-header list on every
 * request: ~10 µs of a ~60 µs latest-prices answer by ablation under wrk). This one compares the
 * Origin with a Set and sets precomputed strings.
 *
 * Every answer says `Vary: Origin` (caches must not hand one origin's answer to another) and
 * lists the headers a browser may read; an allowed Origin (exact match, no wildcard) is echoed in
 * `Access-Control-Allow-Origin`, any other gets none. An OPTIONS request, on any path, is answered
 * by a route of its own with a 204 and the allowed methods and headers: never limited (D22: a
 * preflight is never counted) and never authenticated (a browser's preflight cannot carry the
 * token). It is a 204 with or without the preflight headers (no text/plain 400: D19's envelope).
 *
 * An instance-level onRequest hook, so it runs before the limiter (a route-level hook) whatever
 * the registration order: a 429 carries the CORS headers its browser needs to read it.
 */
const corsPlugin: FastifyPluginAsync<CorsPluginOptions> = async (app, options) => {
  const origins = options.origins ?? DEFAULT_CORS_ORIGINS
  if (origins.some((o) => o.includes('*'))) throw new Error('cors: wildcard origins are not allowed (D24)')
  const allowed = new Set(origins)
  const allowedOrigin = (origin: string | undefined): string | undefined => origin !== undefined && allowed.has(origin) ? origin : undefined
  app.decorate('allowedOrigin', allowedOrigin)

  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('vary', 'Origin').header('access-control-expose-headers', EXPOSED_HEADERS)
    const origin = allowedOrigin(request.headers.origin)
    if (origin !== undefined) void reply.header('access-control-allow-origin', origin)
    done()
  })

  // Every OPTIONS request, on any path, is a preflight answer; never limited (D22). Safari waits
  // for a body on a 204 without Content-Length.
  app.options('*', { config: { rateLimit: false } }, (_request, reply) => {
    void reply.code(204)
      .header('access-control-allow-methods', ALLOWED_METHODS)
      .header('access-control-allow-headers', ALLOWED_HEADERS)
      .header('content-length', '0')
      .send()
  })
}

export default fp(corsPlugin, { name: 'cors', fastify: '5.x' })
