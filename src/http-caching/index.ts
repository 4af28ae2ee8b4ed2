import type { FastifyInstance, RouteOptions, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { etagMatches, etagOf } from './cached-body.js'
import { SURROGATE_KEY_HEADER, answerTags, type AnswerTags } from './surrogate-keys.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** From the contract: the route's successful answers may be kept by browsers and shared caches (D17). */
    publicCache?: boolean
    /** The Cache-Control of a route outside the contract on its successful answers. */
    cacheControl?: string
  }
}

/** The contract's Cache-Control of the public reads. */
const PUBLIC_CACHE_CONTROL = 'public, max-age=86400, s-maxage=604800'

export const NO_STORE = 'no-store'

/** `cacheControl` on a success, no-store on an error; a handler may still set its own for one answer. */
function cachePolicy (cacheControl: string): onSendHookHandler {
  return (_request, reply, payload, done) => {
    if (reply.statusCode >= 400) void reply.header('cache-control', NO_STORE)
    else if (!reply.hasHeader('cache-control')) void reply.header('cache-control', cacheControl)
    done(null, payload)
  }
}

/** The hook of a route without a policy, and of every answer no route matched. */
export const noStoreAnswer = cachePolicy(NO_STORE)

async function httpCaching (app: FastifyInstance): Promise<void> {
  const publicRead = (tags: AnswerTags | undefined): onSendHookHandler => (request, reply, payload, done) => {
    const status = reply.statusCode
    if (status >= 400) {
      void reply.header('cache-control', NO_STORE)
      done(null, payload)
      return
    }
    if (!reply.hasHeader('cache-control')) {
      void reply.header('cache-control', PUBLIC_CACHE_CONTROL)
      if (tags !== undefined) void reply.header(SURROGATE_KEY_HEADER, typeof tags === 'string' ? tags : tags(request))
    }
    if (status !== 200 || (request.method !== 'GET' && request.method !== 'HEAD')) {
      done(null, payload)
      return
    }
    // A cached read came with its tag and has answered If-None-Match already (sendCached).
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
    const config = route.config
    const hook = config?.publicCache === true
      ? publicRead(readTags(route))
      : config?.cacheControl !== undefined ? cachePolicy(config.cacheControl) : noStoreAnswer
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
