import type { FastifyInstance, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { etagMatches, etagOf } from './ready-body.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** D17: this route's 2xx/304 answers may be kept by browsers and CDNs. */
    publicCache?: boolean
  }
}

export const PUBLIC_CACHE_CONTROL = 'public, max-age=86400, s-maxage=604800'

/** D17 no-store unless a route chose otherwise on a success; also every answer no route matched. */
export const privateAnswer: onSendHookHandler = (_request, reply, payload, done) => {
  if (reply.statusCode >= 400 || !reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store')
  done(null, payload)
}

/** D17 public Cache-Control on reads (no-store elsewhere), D18 ETags and 304; policy from the contract. */
async function httpCaching (app: FastifyInstance): Promise<void> {
  const publicAnswer: onSendHookHandler = (request, reply, payload, done) => {
    const status = reply.statusCode
    if (status >= 400) {
      void reply.header('cache-control', 'no-store')
      done(null, payload)
      return
    }
    // A route may set its own on a success (ingest's dry run: no-store).
    if (!reply.hasHeader('cache-control')) void reply.header('cache-control', PUBLIC_CACHE_CONTROL)
    if (status !== 200 || (request.method !== 'GET' && request.method !== 'HEAD')) {
      done(null, payload)
      return
    }
    // A cached answer came with its tag and already answered If-None-Match (sendReady).
    if (reply.hasHeader('etag') || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) {
      done(null, payload)
      return
    }
    const etag = etagOf(payload)
    void reply.header('etag', etag)
    if (etagMatches(request.headers['if-none-match'], etag)) {
      void reply.code(304).removeHeader('content-length').removeHeader('content-type')
      done(null, null)
      return
    }
    done(null, payload)
  }

  app.addHook('onRoute', (route) => {
    const hook = route.config?.publicCache === true ? publicAnswer : privateAnswer
    // A new array: the implied HEAD route is declared from a copy of these options.
    const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]
    route.onSend = [...own, hook]
  })
}
export default fp(httpCaching, { name: 'http-caching' })
