import { createHash } from 'node:crypto'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { addVary } from './vary.js'

/**
 * A JSON body made once and served many times: its bytes and strong ETag, and its compressed
 * forms, each made the first time a client asks for it and then kept.
 */
export interface ReadyBody {
  readonly json: Buffer
  readonly etag: string
  /** Whether the body is large enough to be sent compressed. */
  readonly compressible: boolean
  /** The gzip and brotli forms; undefined below COMPRESS_THRESHOLD_BYTES. */
  readonly gzip: Buffer | undefined
  readonly br: Buffer | undefined
}

/** Below this size compression saves less than its headers and CPU cost. */
const COMPRESS_THRESHOLD_BYTES = 1024

export function etagOf (bytes: Buffer | string): string {
  return `"${createHash('sha1').update(bytes).digest('base64url')}"`
}

/** Made once per cache fill and kept, so the best (slowest) settings are affordable. */
export function readyBody (json: string): ReadyBody {
  const bytes = Buffer.from(json)
  const compressible = bytes.length >= COMPRESS_THRESHOLD_BYTES
  let gzip: Buffer | undefined
  let br: Buffer | undefined
  return {
    json: bytes,
    etag: etagOf(bytes),
    compressible,
    get gzip () {
      if (compressible) gzip ??= gzipSync(bytes, { level: 9 })
      return gzip
    },
    get br () {
      if (compressible) {
        br ??= brotliCompressSync(bytes, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length
          }
        })
      }
      return br
    }
  }
}

export type Encoding = 'br' | 'gzip' | 'identity'

/** What `sendReady` sends a body as, unless told otherwise. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** The best encoding the client accepts (br over gzip); `q=0` excludes one. */
export function preferredEncoding (acceptEncoding: string | undefined): Encoding {
  if (acceptEncoding === undefined || acceptEncoding === '') return 'identity'
  let br = false
  let gzip = false
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';')
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    if (q !== undefined && Number(q.slice(2)) === 0) continue
    if (name === 'br') br = true
    else if (name === 'gzip' || name === 'x-gzip') gzip = true
    else if (name === '*') { br = true; gzip = true }
  }
  return br ? 'br' : gzip ? 'gzip' : 'identity'
}

/** D18: does If-None-Match name this entity? Weak comparison, as RFC 9110 asks for GET. */
export function etagMatches (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  const target = opaque(etag)
  for (const candidate of ifNoneMatch.split(',')) {
    const c = candidate.trim()
    if (c === '*' || opaque(c) === target) return true
  }
  return false
}

// An encoded variant's tag is the identity tag with a suffix; all name the same entity.
function opaque (tag: string): string {
  return tag.replace(/^W\//, '').replace(/^"(.*?)(-(?:br|gzip))?"$/, '$1')
}

/** The bytes to send for a ready body: its br or gzip form when accepted, with a matching tag. */
export function pickRepresentation (body: ReadyBody, acceptEncoding: string | undefined): { bytes: Buffer, etag: string, encoding: Encoding } {
  const encoding = body.compressible ? preferredEncoding(acceptEncoding) : 'identity'
  if (encoding === 'br' && body.br !== undefined) return { bytes: body.br, etag: body.etag.replace(/"$/, '-br"'), encoding }
  if (encoding === 'gzip' && body.gzip !== undefined) return { bytes: body.gzip, etag: body.etag.replace(/"$/, '-gzip"'), encoding }
  return { bytes: body.json, etag: body.etag, encoding: 'identity' }
}

/**
 * Sends a ready body as JSON in the encoding the client prefers, with its ETag (a matching
 * If-None-Match becomes a 304 in the http-caching plugin, D18) and `Vary: Accept-Encoding` when
 * the encoding depends on it (added to the `Vary: Origin` CORS set: a CDN must key on both).
 * The bytes bypass the serializer; the route's schema still documents their shape.
 */
export function sendReady (request: FastifyRequest, reply: FastifyReply, body: ReadyBody, contentType = JSON_CONTENT_TYPE): FastifyReply {
  const { bytes, etag, encoding } = pickRepresentation(body, request.headers['accept-encoding'])
  void reply.header('content-type', contentType).header('etag', etag)
  if (body.compressible) addVary(reply, 'Accept-Encoding')
  if (encoding !== 'identity') void reply.header('content-encoding', encoding)
  return reply.send(bytes)
}

/**
 * Answers with a ready body from `held` when the read cache holds it (no promise on the hot path:
 * issue 12), else from `load` once the cache has it. For a route handler to return: undefined
 * when answered at once (a synchronous handler must not return its reply: Fastify would send it
 * again), else a promise that settles once the answer is sent (or rejects with the load's error).
 */
export function sendHeldOr<T> (held: T | undefined, load: () => Promise<T>, send: (value: T) => FastifyReply): Promise<void> | undefined {
  if (held === undefined) return load().then((value) => { send(value) })
  send(held)
  return undefined
}
