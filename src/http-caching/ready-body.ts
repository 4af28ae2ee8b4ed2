import { createHash } from 'node:crypto'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { addVary } from './vary.js'

/** A JSON body made once and served many times; each compressed form is made on first request. */
export interface ReadyBody {
  readonly json: Buffer
  readonly etag: string
  readonly compressible: boolean
  /** The gzip and brotli forms; undefined below COMPRESS_THRESHOLD_BYTES. */
  readonly gzip: Buffer | undefined
  readonly br: Buffer | undefined
  readonly identity: Representation
  representation: (encoding: Encoding) => Representation
}

export interface Representation {
  readonly bytes: Buffer
  readonly etag: string
  readonly encoding: Encoding
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
  const etag = etagOf(bytes)
  let gzip: Representation | undefined
  let br: Representation | undefined
  return {
    json: bytes,
    etag,
    compressible,
    identity: { bytes, etag, encoding: 'identity' },
    get gzip () {
      if (compressible) gzip ??= { bytes: gzipSync(bytes, { level: 9 }), etag: variantTag(etag, 'gzip'), encoding: 'gzip' }
      return gzip?.bytes
    },
    get br () {
      if (compressible) {
        br ??= {
          bytes: brotliCompressSync(bytes, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
              [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
              [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length
            }
          }),
          etag: variantTag(etag, 'br'),
          encoding: 'br'
        }
      }
      return br?.bytes
    },
    representation (encoding) {
      if (encoding === 'br' && this.br !== undefined) return br as Representation
      if (encoding === 'gzip' && this.gzip !== undefined) return gzip as Representation
      return this.identity
    }
  }
}

// An encoded variant's tag is the identity tag with a suffix; all name the same entity.
function variantTag (etag: string, encoding: 'br' | 'gzip'): string {
  return `${etag.slice(0, -1)}-${encoding}"`
}

export type Encoding = 'br' | 'gzip' | 'identity'

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

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

// Strips `W/` and the encoding suffix variantTag adds.
function opaque (tag: string): string {
  return tag.replace(/^W\//, '').replace(/^"(.*?)(-(?:br|gzip))?"$/, '$1')
}

export function pickRepresentation (body: ReadyBody, acceptEncoding: string | undefined): Representation {
  return body.compressible ? body.representation(preferredEncoding(acceptEncoding)) : body.identity
}

/** The one send path of a cached answer (D45): the preferred encoding, its ETag, the D18 304. */
export function sendReady (request: FastifyRequest, reply: FastifyReply, body: ReadyBody, contentType = JSON_CONTENT_TYPE): FastifyReply {
  const { bytes, etag, encoding } = pickRepresentation(body, request.headers['accept-encoding'])
  if (etagMatches(request.headers['if-none-match'], etag)) {
    void reply.code(304).header('etag', etag)
    if (body.compressible) addVary(reply, 'Accept-Encoding')
    return reply.send()
  }
  void reply.header('content-type', contentType).header('etag', etag)
  if (body.compressible) addVary(reply, 'Accept-Encoding')
  if (encoding !== 'identity') void reply.header('content-encoding', encoding)
  return reply.send(bytes)
}

/**
 * Sends `held` at once, else `load`'s value once it settles. Undefined when sent at once: a
 * synchronous handler must not return its reply, or Fastify sends it twice.
 */
export function sendHeldOr<T> (held: T | undefined, load: () => Promise<T>, send: (value: T) => FastifyReply): Promise<void> | undefined {
  if (held === undefined) return load().then((value) => { send(value) })
  send(held)
  return undefined
}
