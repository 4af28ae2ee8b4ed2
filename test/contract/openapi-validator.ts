import { Readable, Transform, pipeline } from 'node:stream'
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import { openApiDocument } from '../support/openapi-document.js'

/**
 * Response validation against openapi.yaml itself (not src/generated): Ajv (JSON Schema 2020-12,
 * the dialect of OpenAPI 3.1) compiled from the document's components and each operation's
 * responses. test/helper.ts's build() attaches `checkResponses` to every app, so every response
 * any test produces — injected or over a socket — is checked for its operation and status.
 */

type Json = Record<string, any>

export interface ObservedResponse {
  method: string
  /** The route pattern that answered (`request.routeOptions.url`); undefined for a 404. */
  route: string | undefined
  status: number
  /** Lower-case names, as Fastify keeps them. */
  headers: Record<string, unknown>
  /** The bytes as sent (compressed when content-encoding says so); undefined: no body. */
  body: Buffer | string | undefined
  /** Only a prefix of a streamed body was kept. */
  truncated?: boolean
}

export interface Violation {
  operation: string
  method: string
  route: string
  status: number
  problem: string
}

/** A schema compiled on its first use: a test file meets a few operations, not all of them. */
type LazyValidate = () => ValidateFunction
interface MediaCheck { validate: LazyValidate, json: boolean }
interface ResponseCheck {
  content: Map<string, MediaCheck> | undefined
  headers: Map<string, { validate: LazyValidate, integer: boolean }>
}
interface Operation { id: string, responses: Map<string, ResponseCheck> }

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']
const COMPONENTS_ID = 'urn:openapi:components'
const addFormats = addFormatsModule.default

/** `application/json`, `application/problem+json`: parsed as JSON before validation. */
const isJson = (mediaType: string): boolean => /^application\/(?:[\w.-]+\+)?json$/.test(mediaType)

export class OpenApiContract {
  private readonly operations = new Map<string, Operation>()
  private readonly ajv: Ajv2020

  constructor (readonly document: Json) {
    this.ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true }) // the document's type arrays
    addFormats(this.ajv)
    // The OpenAPI 3.1 dialect's own keywords (annotations only).
    this.ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs'])
    this.ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(document.components?.schemas ?? {}) })

    for (const [path, item] of Object.entries<Json>(document.paths ?? {})) {
      for (const method of METHODS) {
        const op = item[method] as Json | undefined
        if (op === undefined) continue
        const responses = new Map<string, ResponseCheck>()
        for (const [status, raw] of Object.entries<Json>(op.responses ?? {})) {
          const response = this.deref(raw)
          responses.set(status, {
            content: response.content === undefined
              ? undefined
              : new Map(Object.entries<Json>(response.content).map(([mediaType, media]) => [mediaType.toLowerCase(), {
                  validate: this.compile(media.schema ?? {}, `${op.operationId as string} ${status} ${mediaType}`),
                  json: isJson(mediaType.toLowerCase())
                }])),
            headers: new Map(Object.entries<Json>(response.headers ?? {}).map(([name, header]) => {
              const schema = this.deref(header).schema ?? {}
              return [name.toLowerCase(), {
                validate: this.compile(schema, `${op.operationId as string} ${status} header ${name}`),
                integer: schema.type === 'integer' || schema.type === 'number'
              }]
            }))
          })
        }
        this.operations.set(`${method.toUpperCase()} ${path}`, { id: op.operationId, responses })
      }
    }
  }

  static load (): OpenApiContract {
    return new OpenApiContract(openApiDocument())
  }

  /** Compiles every schema now (schemas are otherwise compiled at their first use); throws the first that does not compile. */
  compileAll (): number {
    let count = 0
    for (const operation of this.operations.values()) {
      for (const response of operation.responses.values()) {
        for (const media of response.content?.values() ?? []) { media.validate(); count++ }
        for (const header of response.headers.values()) { header.validate(); count++ }
      }
    }
    return count
  }

  /** The operation a (method, route pattern) belongs to; HEAD is GET without a body. */
  operation (method: string, route: string | undefined): Operation | undefined {
    if (route === undefined) return undefined
    const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase()
    return this.operations.get(`${m} ${route}`)
  }

  /** The documented response of a status: exact, then `4XX`-style, then `default`. */
  response (operation: Operation, status: number): ResponseCheck | undefined {
    return operation.responses.get(String(status)) ??
      operation.responses.get(`${String(status)[0]}XX`) ??
      operation.responses.get('default')
  }

  /** The body validator for (method, route, status, content type); undefined when undocumented. */
  validatorFor (method: string, route: string, status: number, contentType: string): ValidateFunction | undefined {
    const operation = this.operation(method, route)
    if (operation === undefined) return undefined
    return this.response(operation, status)?.content?.get(mediaTypeOf(contentType))?.validate()
  }

  /**
   * Problems of one response; [] when it honours the document; undefined when no operation
   * covers it (404 for an unknown path, 405, /docs, /metrics, CORS preflight).
   */
  check (res: ObservedResponse): string[] | undefined {
    const own = this.operation(res.method, res.route)
    if (own === undefined) return undefined
    // An answer a path gives on behalf of another operation names it (D43: the deprecated dry run
    // names its successor in Link, the negotiated CSV export its own URL in Content-Location);
    // it must honour that operation's contract.
    const successor = delegatedRoute(res.headers)
    const operation = successor === undefined ? own : this.operation(res.method, successor)
    if (operation === undefined) return [`names ${successor as string}, which no operation documents`]
    const response = this.response(operation, res.status)
    if (response === undefined) {
      return [`status ${res.status} is not documented (documented: ${[...operation.responses.keys()].join(', ')})`]
    }
    const problems: string[] = []
    for (const [name, header] of response.headers) {
      const value = res.headers[name]
      if (value === undefined) continue
      const typed = header.integer && /^-?\d+(\.\d+)?$/.test(String(value)) ? Number(value) : String(value)
      const validate = header.validate()
      if (!validate(typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${describe(validate)}`)
    }

    const bytes = decode(res)
    const hasBody = bytes !== undefined && bytes.length > 0
    if (res.method.toUpperCase() === 'HEAD') return problems
    if (response.content === undefined) {
      if (hasBody) problems.push(`a body was sent but status ${res.status} documents none`)
      return problems
    }
    const contentType = res.headers['content-type']
    if (typeof contentType !== 'string') {
      problems.push(`no content-type (documented: ${[...response.content.keys()].join(', ')})`)
      return problems
    }
    const media = response.content.get(mediaTypeOf(contentType))
    if (media === undefined) {
      problems.push(`content-type ${contentType} is not documented (documented: ${[...response.content.keys()].join(', ')})`)
      return problems
    }
    const text = (bytes ?? Buffer.alloc(0)).toString('utf8')
    let value: unknown = text
    if (media.json) {
      if (res.truncated === true) return problems // a prefix of a JSON stream cannot be judged
      try {
        value = JSON.parse(text)
      } catch {
        problems.push(`body is not JSON: ${JSON.stringify(text.slice(0, 80))}`)
        return problems
      }
    }
    const validate = media.validate()
    if (!validate(value)) problems.push(`body ${describe(validate)}`)
    return problems
  }

  private deref (node: Json): Json {
    let current = node
    for (let hops = 0; typeof current.$ref === 'string'; hops++) {
      if (hops > 16) throw new Error(`$ref loop at ${String(node.$ref)}`)
      const ref: string = current.$ref
      if (!ref.startsWith('#/')) throw new Error(`external $ref not supported: ${ref}`)
      let target: any = this.document
      for (const part of ref.slice(2).split('/')) target = target?.[part.replaceAll('~1', '/').replaceAll('~0', '~')]
      if (target === undefined) throw new Error(`unresolved $ref ${ref}`)
      current = target
    }
    return current
  }

  private compile (schema: Json, where: string): LazyValidate {
    let compiled: ValidateFunction | undefined
    return () => {
      try {
        compiled ??= this.ajv.compile(rewriteRefs(schema))
      } catch (err) {
        throw new Error(`openapi.yaml: the schema of ${where} does not compile: ${(err as Error).message}`)
      }
      return compiled
    }
  }
}

/** `#/components/schemas/X` → the components schema registered with Ajv. */
function rewriteRefs<T> (node: T): T {
  if (Array.isArray(node)) return node.map(rewriteRefs) as T
  if (node === null || typeof node !== 'object') return node
  const out: Json = {}
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === '$ref' && typeof value === 'string') {
      const m = /^#\/components\/schemas\/(.+)$/.exec(value)
      if (m === null) throw new Error(`unsupported schema $ref ${value}`)
      out[key] = `${COMPONENTS_ID}#/$defs/${m[1] as string}`
    } else {
      out[key] = rewriteRefs(value)
    }
  }
  return out as T
}

/** The path of `Link: <path>; rel="successor-version"` or of `Content-Location`, if any. */
function delegatedRoute (headers: Record<string, unknown>): string | undefined {
  const link = /<([^>]+)>\s*;\s*rel="?successor-version"?/.exec(String(headers.link ?? ''))?.[1]
  const location = headers['content-location'] === undefined ? undefined : String(headers['content-location'])
  return (link ?? location)?.split('?')[0]
}

function mediaTypeOf (contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase()
}

function describe (validate: ValidateFunction): string {
  return (validate.errors ?? []).map((e) => `${e.instancePath === '' ? '' : e.instancePath + ' '}${e.message ?? e.keyword}`).join('; ')
}

/** The identity bytes of a response body. */
function decode (res: ObservedResponse): Buffer | undefined {
  if (res.body === undefined) return undefined
  const bytes = typeof res.body === 'string' ? Buffer.from(res.body) : res.body
  if (res.truncated === true) return bytes
  switch (String(res.headers['content-encoding'] ?? 'identity').toLowerCase()) {
    case 'gzip': return gunzipSync(bytes)
    case 'br': return brotliDecompressSync(bytes)
    case 'deflate': return inflateSync(bytes)
    default: return bytes
  }
}

let shared: OpenApiContract | undefined

/** Streamed bodies are kept up to this many bytes for the check; enough for any test's body. */
const STREAM_CAPTURE_BYTES = 8 * 1024 * 1024

/**
 * Checks every response `app` sends against openapi.yaml and calls `onViolation` for each
 * problem. Added as the last onSend hook, so it sees the final status, headers and payload (a
 * 304 made by the caching hook included); a streamed payload is passed through unchanged and
 * checked when it ends.
 */
export function checkResponses (app: FastifyInstance, onViolation: (violation: Violation) => void): void {
  const contract = (shared ??= OpenApiContract.load())
  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions.url
    const operation = contract.operation(request.method, route)
    if (operation === undefined) return payload
    const report = (body: Buffer | string | undefined, truncated = false): void => {
      const observed: ObservedResponse = {
        method: request.method,
        route,
        status: reply.statusCode,
        headers: reply.getHeaders() as Record<string, unknown>,
        body,
        truncated
      }
      let problems: string[] | undefined
      try {
        problems = contract.check(observed)
      } catch (err) {
        problems = [`could not be checked: ${(err as Error).message}`]
      }
      for (const problem of problems ?? []) {
        onViolation({ operation: operation.id, method: request.method, route: route as string, status: reply.statusCode, problem })
      }
    }
    if (payload instanceof Readable) {
      const chunks: Buffer[] = []
      let kept = 0
      let truncated = false
      const observer = new Transform({
        transform (chunk: Buffer, _encoding, callback) {
          if (kept < STREAM_CAPTURE_BYTES) { chunks.push(chunk); kept += chunk.length } else truncated = true
          callback(null, chunk)
        },
        flush (callback) {
          report(Buffer.concat(chunks), truncated)
          callback()
        }
      })
      // The source's errors reach `observer`, so Fastify handles a failing stream as before.
      pipeline(payload, observer, () => {})
      return observer
    }
    report(typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : undefined)
    return payload
  })
}
