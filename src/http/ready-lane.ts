import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import proxyAddr from '@fastify/proxy-addr'
import type { Recorder } from '../plugins/app/metrics.js'
import { clientKey, type HitResult } from '../ratelimit/sliding-window.js'
import { prefersCsv } from './accept.js'
import { etagMatches, pickRepresentation, type ReadyBody } from './body.js'
import { announcesBody } from './early-answer.js'

/**
 * D45 (issue 12): the ready-answer lane. A GET for a URL the service has already answered from
 * the read cache is answered again from the same ready bytes, by the same rules, before Fastify's
 * routing, validation and hook chain run: those cost more than the rest of a cache hit together.
 *
 * The lane never decides anything the app has not decided first. A URL is *learned* only when its
 * route handler answers it from the read cache (after Fastify matched the route and validated the
 * query), together with how to find its body again (`held`: a read of the cache, so an ingest makes
 * it miss). On a later request for exactly that URL the lane applies the app's own policies: the
 * CORS headers (D24), the D22 limiter with the same key (D23) and headers, content negotiation (CSV
 * for listPrices, br/gzip), the ETag and a 304 for a matching If-None-Match (D18), the D17
 * Cache-Control, and the request metrics of the route. Anything else falls through to Fastify
 * unchanged: another method, a request with a body, a URL not learned, a body no longer held, a
 * request the limiter refuses (the 429 is Fastify's, with the hit already counted passed along so
 * it is not counted twice), a client that prefers CSV, and every request while the app closes.
 */

/** What the lane needs from the app's plugins; each is the plugin's own function, not a copy. */
export interface ReadyLanePolicies {
  /** D24: the `Access-Control-Allow-Origin` value for this Origin, or undefined. */
  allowOrigin: (origin: string | undefined) => string | undefined
  /** D24: the headers the CORS hook puts on every answer (Vary is handled here). */
  exposeHeaders: string
  /** D22: counts the request for `ip`, synchronously. */
  hit: (ip: string) => HitResult
  /** D22: the RateLimit-* header values of an answer the limiter allowed. */
  limitHeaders: (hit: HitResult) => { limit: string, remaining: string, reset: string }
  /** D22: remembers a hit on a request passed on to Fastify, so its limiter does not count it again. */
  passHit: (request: IncomingMessage, hit: HitResult) => void
  /** D17: the Cache-Control of a public read. */
  publicCacheControl: string
  /** The app is closing: its answers must say `Connection: close` (Fastify's path does that). */
  closing: () => boolean
}

/** A route whose answers the lane may repeat. */
export interface LaneRoute {
  readonly record: Recorder
  /** listPrices: the answer depends on Accept (CSV export, D43), and says `Vary: Accept`. */
  readonly negotiatesCsv: boolean
  /** The Content-Type the route's handler sends its ready bodies with. */
  readonly contentType: string
}

interface Learned {
  readonly route: LaneRoute
  /** The body this URL answers with, when the read cache holds it (a counted hit). */
  readonly held: () => ReadyBody | undefined
}

/** Learned URLs kept at most (a Map entry and a closure each); past it the table starts over. */
export const MAX_LEARNED_URLS = 2048

/**
 * The client address as Fastify's `request.ip` computes it for `trustProxy` (D23), or undefined
 * when the lane cannot compute it exactly the same way (a hop count): the lane is then off.
 */
export function clientAddressOf (trustProxy: boolean | number | string[]): ((request: IncomingMessage) => string) | undefined {
  if (trustProxy === false) return (request) => request.socket.remoteAddress as string
  if (typeof trustProxy === 'number') return undefined
  const trust = trustProxy === true ? () => true : proxyAddr.compile(trustProxy)
  return (request) => {
    const addresses = proxyAddr.all(request, trust)
    return addresses[addresses.length - 1] as string
  }
}

export class ReadyLane {
  private readonly learned = new Map<string, Learned>()
  /** Requests this lane answered (the `fuel_ready_lane_answers_total` metric). */
  answered = 0

  constructor (
    private readonly policies: ReadyLanePolicies,
    private readonly clientAddress: (request: IncomingMessage) => string
  ) {}

  /** Called by a route handler answering `url` from the read cache; `held` finds that body again. */
  learn (url: string, route: LaneRoute, held: () => ReadyBody | undefined): void {
    if (this.learned.has(url)) return
    if (this.learned.size >= MAX_LEARNED_URLS) this.learned.clear()
    this.learned.set(url, { route, held })
  }

  /** Number of URLs learned (tests). */
  get size (): number {
    return this.learned.size
  }

  /** Answers `request` and returns true, or returns false having written nothing: Fastify answers. */
  answer (request: IncomingMessage, response: ServerResponse): boolean {
    if (request.method !== 'GET') return false
    const learned = this.learned.get(request.url as string)
    if (learned === undefined) return false
    const headers = request.headers
    const { route } = learned
    const policies = this.policies
    if (announcesBody(headers) || policies.closing()) return false
    if (route.negotiatesCsv && prefersCsv(headers.accept)) return false
    const started = performance.now()

    const hit = policies.hit(clientKey(this.clientAddress(request), request.socket.remoteAddress))
    if (!hit.allowed) {
      policies.passHit(request, hit)
      return false
    }
    const body = learned.held()
    if (body === undefined) {
      policies.passHit(request, hit)
      return false
    }

    // The headers in the order Fastify's path sets them: CORS (onRequest), the limiter, the
    // handler (sendReady), Cache-Control (onSend).
    const { bytes, etag, encoding } = pickRepresentation(body, headers['accept-encoding'])
    const out: OutgoingHttpHeaders = {
      vary: route.negotiatesCsv
        ? (body.compressible ? 'Origin, Accept, Accept-Encoding' : 'Origin, Accept')
        : (body.compressible ? 'Origin, Accept-Encoding' : 'Origin'),
      'access-control-expose-headers': policies.exposeHeaders
    }
    const origin = policies.allowOrigin(headers.origin)
    if (origin !== undefined) out['access-control-allow-origin'] = origin
    const limit = policies.limitHeaders(hit)
    out['ratelimit-limit'] = limit.limit
    out['ratelimit-remaining'] = limit.remaining
    out['ratelimit-reset'] = limit.reset
    let status = 200
    if (etagMatches(headers['if-none-match'], etag)) {
      // D18: what the http-caching hook makes of it: no body, type, encoding or length.
      status = 304
      out.etag = etag
      out['cache-control'] = policies.publicCacheControl
      response.writeHead(304, out)
      response.end()
    } else {
      out['content-type'] = route.contentType
      out.etag = etag
      if (encoding !== 'identity') out['content-encoding'] = encoding
      out['cache-control'] = policies.publicCacheControl
      out['content-length'] = bytes.length
      response.writeHead(200, out)
      response.end(bytes)
    }
    this.answered++
    route.record('GET', status, performance.now() - started)
    return true
  }
}
