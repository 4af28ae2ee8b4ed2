/**
 * One kind of error that carries its HTTP status and the exact `detail` the client receives
 * (D19: every error is `{"detail": ...}`). Domain code throws these; the single error handler in
 * app.ts turns them into responses. Anything else becomes a 500 whose body never leaks internals.
 */
export class HttpError extends Error {
  readonly statusCode: number
  readonly detail: unknown
  readonly headers: Record<string, string>

  constructor (statusCode: number, detail: unknown, headers: Record<string, string> = {}) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail))
    this.name = 'HttpError'
    this.statusCode = statusCode
    this.detail = detail
    this.headers = headers
  }
}

/** A 400 raised by CSV ingest validation (spec 4.5, D5–D10). */
export class IngestRejected extends HttpError {
  constructor (detail: string) {
    super(400, detail)
    this.name = 'IngestRejected'
  }
}
