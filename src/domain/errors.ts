import type { CsvRejection } from '../generated/openapi.js'
import { HttpError } from '../http-server/http-error.js'

export type RejectionFields = Omit<CsvRejection, 'detail' | 'line'>

/** A 400 raised by CSV ingest validation (spec 4.5); `line`: the row it is about. */
export class IngestRejected extends HttpError {
  line: number | undefined
  /** Filled in as the error travels out: the cell's reader knows the rule, the row reader the column. */
  readonly fields: RejectionFields

  constructor (detail: string, line?: number, fields: RejectionFields = {}) {
    super(400, detail)
    this.name = 'IngestRejected'
    this.line = line
    this.fields = { ...fields }
  }

  body (): CsvRejection {
    return this.line === undefined ? { detail: this.detail as string, ...this.fields } : { detail: this.detail as string, line: this.line, ...this.fields }
  }
}

/** A refused cell is repeated in a message up to this many characters. */
const ECHO_MAX_CHARS = 100

/** Cut at ECHO_MAX_CHARS, never inside a surrogate pair. */
export function echoCell (raw: string): string {
  if (raw.length <= ECHO_MAX_CHARS) return raw
  const cut = raw.charCodeAt(ECHO_MAX_CHARS - 1) >= 0xd800 && raw.charCodeAt(ECHO_MAX_CHARS - 1) <= 0xdbff ? ECHO_MAX_CHARS - 1 : ECHO_MAX_CHARS
  return `${raw.slice(0, cut)}… (${raw.length} characters)`
}
