import { DrizzleQueryError } from 'drizzle-orm'

/** What a log line says of an error: never a query's text or its bind parameters. */
export interface ErrorFields {
  type: string
  message: string
  /** SQLSTATE from PostgreSQL and PGlite, or Node's errno code (ECONNREFUSED, ENOSPC). */
  code?: string
  severity?: string
  /** Only for an error of the service's own code; a driver's answer has a code instead. */
  stack?: string
  cause?: ErrorFields
}

/** A message is cut to this many characters: a driver's is a sentence, never a batch. */
export const MESSAGE_MAX_CHARS = 500
/** Frames of a stack kept: where the fault is, not the framework beneath it. */
const STACK_MAX_LINES = 12
const STACK_MAX_CHARS = 2000
const CAUSE_DEPTH = 2

/** Drizzle's wrapper gives way to the driver's error: its message holds the SQL and every bind parameter (D61). */
function rootOfQueryError (err: unknown): unknown {
  return err instanceof DrizzleQueryError && err.cause !== undefined ? err.cause : err
}

/** pino's `err` serializer for the service: a few short fields, whatever the error carries. */
export function errorFields (err: unknown, depth = 0): ErrorFields {
  const error = rootOfQueryError(err)
  if (isErrorFields(error)) return { ...error, message: cut(error.message, MESSAGE_MAX_CHARS) } // made before, for a count of repeats
  if (!(error instanceof Error)) return { type: typeof error, message: cut(String(error), MESSAGE_MAX_CHARS) }
  const { code, severity } = error as { code?: unknown, severity?: unknown }
  const fields: ErrorFields = {
    type: typeName(error, severity),
    message: error instanceof DrizzleQueryError ? 'Failed query' : cut(error.message, MESSAGE_MAX_CHARS)
  }
  if (typeof code === 'string' || typeof code === 'number') fields.code = String(code)
  if (typeof severity === 'string') fields.severity = severity
  if (fields.code === undefined && !(error instanceof DrizzleQueryError) && error.stack !== undefined) fields.stack = trimStack(error.stack)
  const cause = (error as { cause?: unknown }).cause
  if (cause !== undefined && depth < CAUSE_DEPTH) fields.cause = errorFields(cause, depth + 1)
  return fields
}

function isErrorFields (value: unknown): value is ErrorFields {
  return typeof value === 'object' && value !== null && !(value instanceof Error) &&
    typeof (value as ErrorFields).type === 'string' && typeof (value as ErrorFields).message === 'string'
}

/** PGlite's errors are named `error` by a minified class: a database's answer is a DatabaseError. */
function typeName (error: Error, severity: unknown): string {
  if (error.name !== 'Error' && error.name !== 'error') return error.name
  return typeof severity === 'string' ? 'DatabaseError' : error.constructor.name
}

function trimStack (stack: string): string {
  const lines = stack.split('\n')
  return cut([cut(lines[0] ?? '', MESSAGE_MAX_CHARS), ...lines.slice(1, STACK_MAX_LINES)].join('\n'), STACK_MAX_CHARS)
}

function cut (text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`
}
