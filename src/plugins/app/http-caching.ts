import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { etagMatches, etagOf } from '../../http/body.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** D17: this route's 2xx/304 answers may be kept by browsers and CDNs. */
    publicCache?: boolean
  }
}

const PUBLIC_CACHE_CONTROL = 'public, max-age=86400, s-maxage=604800'

/**
 * D17: `public, max-age=86400, s-maxage=604800` on the 2xx/304 of the public read routes and the
 * ingest 201; everything else — health, errors (a CDN keeping a 429 or 500 for a week breaks
 * clients) — `no-store`.
 * D18: a GET body gets a strong ETag (unless its route set one) and a matching If-None-Match
 * turns the answer into a 304 without a body.
 */
async function httpCaching (app: FastifyInstance): Promise<void> {
  app.addHook('onSend', (request, reply, payload, done) => {
    const status = reply.statusCode
    const cacheable = status < 400 && request.routeOptions.config.publicCache === true
    // A route may set its own on a success (ingest's dry run: no-store); errors are always no-store.
    if (status >= 400 || !reply.hasHeader('cache-control')) {
      void reply.header('cache-control', cacheable ? PUBLIC_CACHE_CONTROL : 'no-store')
    }
    if (status !== 200 || (request.method !== 'GET' && request.method !== 'HEAD') || !cacheable) {
      done(null, payload)
      return
    }
    let etag = reply.getHeader('etag') as string | undefined
    if (etag === undefined && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
      etag = etagOf(payload)
      void reply.header('etag', etag)
    }
    if (etag !== undefined && etagMatches(request.headers['if-none-match'], etag)) {
      void reply.code(304).removeHeader('content-length').removeHeader('content-encoding').removeHeader('content-type')
      done(null, null)
      return
    }
    done(null, payload)
  })
}

export default fp(httpCaching, { name: 'http-caching' })
