import type { FastifyInstance, RouteOptions, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { etagMatches, etagOf } from './ready-body.js'
import { SURROGATE_KEY_HEADER, answerTags, type AnswerTags } from './surrogate-keys.js'

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

/**
 * D17 public Cache-Control on reads (no-store elsewhere), D18 ETags and 304, D70 the tags a shared
 * cache files a read under; policy from the contract.
 */
async function httpCaching (app: FastifyInstance): Promise<void> {
  /** The hook of a public route; `tags` for its GET and HEAD answers (D70). */
  const publicAnswer = (tags: AnswerTags | undefined): onSendHookHandler => (request, reply, payload, done) => {
    const status = reply.statusCode
    if (status >= 400) {
      void reply.header('cache-control', 'no-store')
      done(null, payload)
      return
    }
    // A route may set its own on a success (ingest's dry run: no-store).
    if (!reply.hasHeader('cache-control')) {
      void reply.header('cache-control', PUBLIC_CACHE_CONTROL)
      if (tags !== undefined) void reply.header(SURROGATE_KEY_HEADER, typeof tags === 'string' ? tags : tags(request))
    }
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
    const hook = route.config?.publicCache === true ? publicAnswer(readTags(route)) : privateAnswer
    // A new array: the implied HEAD route is declared from a copy of these options.
    const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]
    route.onSend = [...own, hook]
  })
}

/** A public read without tags could never be purged from a shared cache: refused at start (D70). */
function readTags (route: RouteOptions): AnswerTags | undefined {
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  if (!methods.every((m) => m === 'GET' || m === 'HEAD')) return undefined
  const tags = answerTags(route.schema?.operationId)
  if (tags === undefined) throw new Error(`http-caching: ${methods.join(',')} ${route.url} is publicly cacheable but has no Surrogate-Key tags`)
  return tags
}

export default fp(httpCaching, { name: 'http-caching' })
