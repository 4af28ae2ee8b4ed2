import type { FastifySchemaValidationError, preHandlerHookHandler } from 'fastify'
import type { ValidationErrorItem } from '../generated/openapi.js'

const LOCATION: Record<string, string> = { querystring: 'query', body: 'body', params: 'path', headers: 'header' }

/** The 422's items in pydantic v1's words (D20): one per failing parameter, in Ajv's order. */
export function toValidationItems (errors: FastifySchemaValidationError[], context: string): ValidationErrorItem[] {
  const where = LOCATION[context] ?? context
  const seen = new Set<string>()
  const items: ValidationErrorItem[] = []
  for (const error of errors) {
    const name = parameterOf(error)
    if (seen.has(name)) continue
    seen.add(name)
    items.push({ loc: [where, name], ...describe(error) })
  }
  return items
}

function parameterOf (error: FastifySchemaValidationError): string {
  if (error.keyword === 'required') return String(error.params.missingProperty)
  return error.instancePath.replace(/^\//, '').split('/')[0] ?? ''
}

function describe (error: FastifySchemaValidationError): { msg: string, type: string } {
  const p = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'minimum':
      return { msg: `ensure this value is greater than or equal to ${String(p.limit)}`, type: 'value_error.number.not_ge' }
    case 'maximum':
      return { msg: `ensure this value is less than or equal to ${String(p.limit)}`, type: 'value_error.number.not_le' }
    case 'exclusiveMinimum':
      return { msg: `ensure this value is greater than ${String(p.limit)}`, type: 'value_error.number.not_gt' }
    case 'exclusiveMaximum':
      return { msg: `ensure this value is less than ${String(p.limit)}`, type: 'value_error.number.not_lt' }
    case 'maxLength':
      return { msg: `ensure this value has at most ${String(p.limit)} characters`, type: 'value_error.any_str.max_length' }
    case 'minLength':
      return { msg: `ensure this value has at least ${String(p.limit)} characters`, type: 'value_error.any_str.min_length' }
    case 'format':
      if (p.format === 'date') return { msg: 'invalid date format', type: 'value_error.date' }
      return { msg: `invalid ${String(p.format)} format`, type: `value_error.${String(p.format)}` }
    case 'required':
      return { msg: 'field required', type: 'value_error.missing' }
    case 'pattern':
      return { msg: `string does not match regex "${String(p.pattern)}"`, type: 'value_error.str.regex' }
    case 'enum': {
      // pydantic v1's wording for an Enum field, e.g. `permitted: 'json', 'csv'`.
      const allowed = Array.isArray(p.allowedValues) ? p.allowedValues.map((v) => `'${String(v)}'`).join(', ') : ''
      return { msg: `value is not a valid enumeration member; permitted: ${allowed}`, type: 'type_error.enum' }
    }
    case 'type':
      switch (p.type) {
        case 'integer': return { msg: 'value is not a valid integer', type: 'type_error.integer' }
        case 'number': return { msg: 'value is not a valid float', type: 'type_error.float' }
        case 'boolean': return { msg: 'value could not be parsed to a boolean', type: 'type_error.bool' }
        default: return { msg: 'str type expected', type: 'type_error.str' }
      }
    default:
      return { msg: error.message ?? 'invalid value', type: `value_error.${error.keyword}` }
  }
}

/** Ajv lets `Infinity` pass as an integer, so these parameters are checked again after validation. */
export function finiteIntegers (...names: string[]): preHandlerHookHandler {
  return (request, reply, done) => {
    const query = request.query as Record<string, unknown>
    const bad = names.filter((name) => typeof query[name] === 'number' && !Number.isFinite(query[name]))
    if (bad.length === 0) { done(); return }
    void reply.code(422).send({ detail: bad.map((name) => ({ loc: ['query', name], msg: 'value is not a valid integer', type: 'type_error.integer' })) })
  }
}
