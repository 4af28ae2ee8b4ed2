import { HttpError } from '../http-server/http-error.js'

/** A 400 raised by CSV ingest validation (spec 4.5, D5–D10); D51 `line`: the row it is about. */
export class IngestRejected extends HttpError {
  line: number | undefined

  constructor (detail: string, line?: number) {
    super(400, detail)
    this.name = 'IngestRejected'
    this.line = line
  }
}

/** D48: a refused cell is repeated in a message up to this many characters. */
export const ECHO_MAX_CHARS = 100

/** Cut at ECHO_MAX_CHARS, never inside a surrogate pair. */
export function echoCell (raw: string): string {
  if (raw.length <= ECHO_MAX_CHARS) return raw
  const cut = raw.charCodeAt(ECHO_MAX_CHARS - 1) >= 0xd800 && raw.charCodeAt(ECHO_MAX_CHARS - 1) <= 0xdbff ? ECHO_MAX_CHARS - 1 : ECHO_MAX_CHARS
  return `${raw.slice(0, cut)}… (${raw.length} characters)`
}
