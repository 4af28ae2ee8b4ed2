import { createHash } from 'node:crypto'
import { brotliCompress, constants, gzipSync } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { addVary } from './vary.js'

export type Encoding = 'br' | 'gzip' | 'identity'

interface Representation {
  readonly bytes: Buffer
  readonly etag: string
  readonly encoding: Encoding
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** Below this size compression saves less than its headers and CPU cost. */
const COMPRESS_THRESHOLD_BYTES = 1024

export function etagOf (bytes: Buffer | string): string {
  return `"${createHash('sha1').update(bytes).digest('base64url')}"`
}

/** The encodings a client takes, as bits: GZIP | BR. */
export const GZIP = 1
export const BR = 2

/** An answer made once per cache fill and sent many times, so the slowest, best compression is affordable. */
export class CachedBody {
  readonly identity: Representation
  readonly compressible: boolean
  private gzip: Representation | undefined
  private br: Representation | undefined
  private brMaking: Promise<Representation> | undefined

  constructor (text: string) {
    const bytes = Buffer.from(text)
    this.identity = { bytes, etag: etagOf(bytes), encoding: 'identity' }
    this.compressible = bytes.length >= COMPRESS_THRESHOLD_BYTES
  }

  get bytes (): Buffer {
    return this.identity.bytes
  }

  get etag (): string {
    return this.identity.etag
  }

  /**
   * The best form made so far for a client taking `accepted` (GZIP | BR bits). Brotli at its best
   * quality costs ~100 ms for a cycle of towns, so it is made in the thread pool on first demand
   * and gzip (a few ms) answers until it is ready: no read waits behind another's compression.
   */
  representation (accepted: number): Representation {
    if (!this.compressible || accepted === 0) return this.identity
    if ((accepted & BR) !== 0) {
      if (this.br !== undefined) return this.br
      this.brotli().catch(() => {}) // a failure leaves gzip answering; the next brotli client tries again
    }
    return (accepted & GZIP) !== 0 ? this.gzipped() : this.identity
  }

  gzipped (): Representation {
    this.gzip ??= { bytes: gzipSync(this.bytes, { level: 9 }), etag: variantTag(this.etag, 'gzip'), encoding: 'gzip' }
    return this.gzip
  }

  /** The brotli form, made once, off the event loop. */
  async brotli (): Promise<Representation> {
    this.brMaking ??= new Promise<Representation>((resolve, reject) => {
      brotliCompress(this.bytes, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_SIZE_HINT]: this.bytes.length
        }
      }, (err, bytes) => {
        if (err !== null) {
          this.brMaking = undefined
          reject(err)
          return
        }
        this.br = { bytes, etag: variantTag(this.etag, 'br'), encoding: 'br' }
        resolve(this.br)
      })
    })
    return await this.brMaking
  }
}

// An encoded form's tag is the identity tag with a suffix; all name the same entity.
function variantTag (etag: string, encoding: 'br' | 'gzip'): string {
  return `${etag.slice(0, -1)}-${encoding}"`
}

/** The encodings sent here that a client takes, as GZIP | BR bits, honouring `q=0`. */
export function acceptedEncodings (acceptEncoding: string | undefined): number {
  if (acceptEncoding === undefined || acceptEncoding === '') return 0
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
  return (br ? BR : 0) | (gzip ? GZIP : 0)
}

/** Does If-None-Match name this entity? Weak comparison, as RFC 9110 asks for GET. */
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

interface SendOptions {
  contentType?: string
  /** Request headers the answer depends on besides Origin and Accept-Encoding. */
  vary?: readonly string[]
}

/** Sends a cached read in the client's preferred encoding, or a 304; Cache-Control comes from the route's policy. */
export async function sendCached (request: FastifyRequest, reply: FastifyReply, body: Promise<CachedBody>, options: SendOptions = {}): Promise<FastifyReply> {
  const cached = await body
  const { bytes, etag, encoding } = cached.compressible ? cached.representation(acceptedEncodings(request.headers['accept-encoding'])) : cached.identity
  if (cached.compressible) addVary(reply, ...options.vary ?? [], 'Accept-Encoding')
  else if (options.vary !== undefined) addVary(reply, ...options.vary)
  void reply.header('etag', etag)
  if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send()
  void reply.header('content-type', options.contentType ?? JSON_CONTENT_TYPE)
  if (encoding !== 'identity') void reply.header('content-encoding', encoding)
  return reply.send(bytes)
}
