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

/** D48: the most characters of a refused cell a message repeats. */
export const ECHO_MAX_CHARS = 100

/** A refused cell as a message repeats it: whole when short, else a prefix and its length. */
export function echoCell (raw: string): string {
  if (raw.length <= ECHO_MAX_CHARS) return raw
  const cut = raw.charCodeAt(ECHO_MAX_CHARS - 1) >= 0xd800 && raw.charCodeAt(ECHO_MAX_CHARS - 1) <= 0xdbff ? ECHO_MAX_CHARS - 1 : ECHO_MAX_CHARS
  return `${raw.slice(0, cut)}… (${raw.length} characters)`
}
