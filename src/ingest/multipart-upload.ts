import { finished } from 'node:stream/promises'
import multipart from '@fastify/multipart'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { HttpError } from '../domain/errors.js'

/**
 * Reading the one CSV file of an upload (spec 4.5): multipart/form-data with a part named `file`
 * of a CSV media type, within MAX_UPLOAD_BYTES (D11, D12). Every way a body can be wrong is an
 * exact 4xx; nothing of a refused upload is kept.
 */

const NOT_CSV = 'Uploaded file must be a CSV file.'
/** D48: the longest file name an upload may carry (a common file-system limit). */
const MAX_FILENAME_CHARS = 255
const FILENAME_TOO_LONG = `Uploaded file name is longer than ${MAX_FILENAME_CHARS} characters.`
const MALFORMED_MULTIPART = 'Malformed multipart/form-data body.'
const ONE_FILE_ONLY = 'Upload exactly one file, in the form field "file".'
const TOO_MANY_PARTS = 'Multipart body has too many parts.'

/** Spec 4.5: the accepted media types, compared without parameters, case-insensitively (D12). */
const CSV_MEDIA_TYPES = new Set(['text/csv', 'application/vnd.ms-excel', 'application/octet-stream'])

/** D11: the FastAPI/pydantic-v1 answer for a missing `file` form field. */
const fileMissing = (): HttpError => new HttpError(422, [{ loc: ['body', 'file'], msg: 'field required', type: 'value_error.missing' }])

/**
 * D12: `Uploaded file exceeds the 10 MiB limit.`, the figure following MAX_UPLOAD_BYTES. What the
 * client still sends is drained after the answer, within bounds (D48: lingering close), so that
 * a client that keeps sending can read it.
 */
const tooLarge = (maxBytes: number): HttpError =>
  new HttpError(413, `Uploaded file exceeds the ${formatByteSize(maxBytes)} limit.`)

/**
 * What a multipart body may hold besides the file within the limits below (16 fields of 16 KiB,
 * part headers, boundaries). A Content-Length above maxBytes + this cannot be a valid upload, so
 * it is refused before a byte is read.
 */
const MULTIPART_ALLOWANCE_BYTES = 1024 * 1024

/** A byte count as people say it: whole MiB or KiB when it is one ("10 MiB"), else bytes. */
export function formatByteSize (bytes: number): string {
  const MiB = 1024 * 1024
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`
  return bytes === 1 ? '1 byte' : `${bytes} bytes`
}

/**
 * Sets up the body parsers of an encapsulated upload route: only multipart/form-data reaches the
 * multipart reader; every other body (JSON, text, none) is drained so the handler can answer
 * D11's 422 instead of Fastify's 415. The rest of the app keeps its parsers.
 */
export async function acceptUploads (app: FastifyInstance, maxBytes: number): Promise<void> {
  app.removeAllContentTypeParsers()
  await app.register(multipart, {
    limits: {
      fileSize: maxBytes, // D12: busboy stops buffering here and the upload is refused, never cut
      files: 1,
      fields: 16,
      parts: 32,
      fieldSize: 16 * 1024,
      fieldNameSize: 100,
      headerPairs: 32
    }
  })
  app.addContentTypeParser('*', (request, payload, done) => {
    if (Number(request.headers['content-length']) > maxBytes) {
      done(tooLarge(maxBytes))
      return
    }
    // Discard as it arrives (constant memory); a body above the upload limit stops here (D12).
    let seen = 0
    const onData = (chunk: Buffer): void => {
      seen += chunk.length
      if (seen > maxBytes) {
        payload.removeListener('data', onData)
        payload.removeListener('end', onEnd)
        payload.pause()
        done(tooLarge(maxBytes))
      }
    }
    const onEnd = (): void => { done(null, undefined) }
    payload.on('data', onData)
    payload.once('end', onEnd)
    payload.once('error', (err) => { payload.removeListener('end', onEnd); done(err) })
  })
}

/**
 * The bytes of the `file` part. Other parts, and a refused file, are read and discarded rather
 * than left on the connection; the limits keep that bounded.
 */
export async function readCsvUpload (request: FastifyRequest, maxBytes: number): Promise<Buffer> {
  if (!request.isMultipart()) throw fileMissing() // D11
  if (Number(request.headers['content-length']) > maxBytes + MULTIPART_ALLOWANCE_BYTES) throw tooLarge(maxBytes)
  let upload: Buffer | undefined
  let notCsv = false
  try {
    for await (const part of request.parts()) {
      if (part.type !== 'file') continue
      if (part.fieldname !== 'file') {
        part.file.resume()
        await finished(part.file)
      } else if ((part.filename ?? '').length > MAX_FILENAME_CHARS) {
        // D48: past ~80 KB busboy drops the rest of a part's headers (its type included), so
        // the name's limit is what is answered, never a wrong type.
        throw new HttpError(400, FILENAME_TOO_LONG)
      } else if (!CSV_MEDIA_TYPES.has(mediaType(part.mimetype))) {
        notCsv = true // judged on the part's header; its bytes are discarded
        part.file.resume()
        await finished(part.file)
      } else {
        upload = await part.toBuffer() // throws on a file above `fileSize` (D12)
      }
    }
  } catch (err) {
    if (notCsv) throw new HttpError(415, NOT_CSV)
    throw uploadError(err, maxBytes)
  }
  if (notCsv) throw new HttpError(415, NOT_CSV)
  if (upload === undefined) throw fileMissing() // D11
  return upload
}

/** Errors of the multipart reader → exact 4xx answers; a malformed body is never a 500. */
function uploadError (err: unknown, maxBytes: number): HttpError {
  if (err instanceof HttpError) return err
  switch ((err as { code?: unknown } | null)?.code) {
    case 'FST_REQ_FILE_TOO_LARGE': return tooLarge(maxBytes)
    case 'FST_FILES_LIMIT': return new HttpError(400, ONE_FILE_ONLY)
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT': return new HttpError(413, TOO_MANY_PARTS)
    // Busboy's parse errors are plain Errors ("Unexpected end of multipart data", "Boundary not
    // found"); @fastify/multipart's others (a `__proto__` field name, a bad JSON field) are as
    // much a malformed body.
    default: return new HttpError(400, MALFORMED_MULTIPART)
  }
}

/** `Text/CSV; charset=utf-8` → `text/csv` (D12). */
function mediaType (value: string): string {
  return (value.split(';')[0] ?? '').trim().toLowerCase()
}
