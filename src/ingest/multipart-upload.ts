import { finished } from 'node:stream/promises'
import multipart from '@fastify/multipart'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { echoCell } from '../domain/errors.js'
import { HttpError } from '../http-server/http-error.js'

const NOT_CSV = 'Uploaded file must be a CSV file.'
/** A common file-system limit on names, so a hostile name is refused rather than stored. */
const MAX_FILENAME_CHARS = 255
const FILENAME_TOO_LONG = `Uploaded file name is longer than ${MAX_FILENAME_CHARS} characters.`
const MALFORMED_MULTIPART = 'Malformed multipart/form-data body.'
const ONE_FILE_ONLY = 'Upload exactly one file, in the form field "file".'
const TOO_MANY_PARTS = 'Multipart body has too many parts.'

/** Spec 4.5: the accepted media types, compared without parameters, case-insensitively. */
const CSV_MEDIA_TYPES = new Set(['text/csv', 'application/vnd.ms-excel', 'application/octet-stream'])

/** The FastAPI/pydantic-v1 answer for a missing `file` form field (D11). */
const fileMissing = (): HttpError => new HttpError(422, [{ loc: ['body', 'file'], msg: 'field required', type: 'value_error.missing' }])

/** The upload size limit; the rest of the body is drained after the answer, within bounds, so the client reads the 413 (D29). */
const tooLarge = (maxBytes: number): HttpError =>
  new HttpError(413, `Uploaded file exceeds the ${formatByteSize(maxBytes)} limit.`)

/** Room for fields, part headers and boundaries: a larger Content-Length is refused unread. */
const MULTIPART_ALLOWANCE_BYTES = 1024 * 1024

export function formatByteSize (bytes: number): string {
  const MiB = 1024 * 1024
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`
  return bytes === 1 ? '1 byte' : `${bytes} bytes`
}

/** RFC 9110 8.4: a compressed upload is refused 415 before its body is read, not parsed as broken multipart. */
export function contentEncodingError (request: FastifyRequest): HttpError | undefined {
  const value = request.headers['content-encoding']
  if (value === undefined) return undefined
  const codings = value.split(',').map((c) => c.trim()).filter((c) => c !== '' && c.toLowerCase() !== 'identity')
  if (codings.length === 0) return undefined
  return new HttpError(415, `Content-Encoding ${echoCell(codings.join(', '))} is not supported: upload the file uncompressed.`, { 'accept-encoding': 'identity' })
}

/** Other bodies than multipart are drained, so the handler answers the missing-file 422 rather than 415. */
export async function acceptUploads (app: FastifyInstance, maxBytes: number): Promise<void> {
  app.removeAllContentTypeParsers()
  await app.register(multipart, {
    limits: {
      fileSize: maxBytes, // busboy stops buffering here and the upload is refused, never cut
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
    // Discard as it arrives (constant memory); a body above the upload limit stops here.
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

/** Other parts, and a refused file, are read and discarded, never left on the connection. */
export async function readCsvUpload (request: FastifyRequest, maxBytes: number): Promise<Buffer> {
  if (!request.isMultipart()) throw fileMissing()
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
        // Past ~80 KB busboy drops a part's type, so the name's limit answers, not a wrong type.
        throw new HttpError(400, FILENAME_TOO_LONG)
      } else if (!CSV_MEDIA_TYPES.has(mediaType(part.mimetype))) {
        notCsv = true
        part.file.resume()
        await finished(part.file)
      } else {
        upload = await part.toBuffer() // throws on a file above `fileSize`
      }
    }
  } catch (err) {
    if (notCsv) throw new HttpError(415, NOT_CSV)
    throw uploadError(err, maxBytes)
  }
  if (notCsv) throw new HttpError(415, NOT_CSV)
  if (upload === undefined) throw fileMissing()
  return upload
}

/** Every error of the multipart reader is an exact 4xx: a malformed body is never a 500. */
function uploadError (err: unknown, maxBytes: number): HttpError {
  if (err instanceof HttpError) return err
  switch ((err as { code?: unknown } | null)?.code) {
    case 'FST_REQ_FILE_TOO_LARGE': return tooLarge(maxBytes)
    case 'FST_FILES_LIMIT': return new HttpError(400, ONE_FILE_ONLY)
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT': return new HttpError(413, TOO_MANY_PARTS)
    // Busboy's parse errors are plain Errors, and @fastify/multipart's others as much a malformed body.
    default: return new HttpError(400, MALFORMED_MULTIPART)
  }
}

function mediaType (value: string): string {
  return (value.split(';')[0] ?? '').trim().toLowerCase()
}
