/** Answered as it is (status, headers and exact `detail`); anything else thrown is a bare 500. */
export class HttpError extends Error {
  readonly statusCode: number
  readonly detail: unknown
  readonly headers: Record<string, string>

  /** `cause`: for a 5xx, the failure behind it, which the request's access line logs. */
  constructor (statusCode: number, detail: unknown, headers: Record<string, string> = {}, cause?: unknown) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail), cause === undefined ? undefined : { cause })
    this.name = 'HttpError'
    this.statusCode = statusCode
    this.detail = detail
    this.headers = headers
  }
}
