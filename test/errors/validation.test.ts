import t from '../support/file-test.js'
import type { FastifySchemaValidationError } from 'fastify'
import { toValidationItems } from '../../src/errors/validation.js'

const err = (keyword: string, instancePath: string, params: Record<string, unknown>): FastifySchemaValidationError =>
  ({ keyword, instancePath, schemaPath: '', params, message: 'ajv message' })

t.test('[D20] Ajv errors become pydantic-v1 items, one per parameter', async (t) => {
  const items = toValidationItems([
    err('minimum', '/limit', { limit: 1 }),
    err('maximum', '/limit', { limit: 1000 }),
    err('minimum', '/offset', { limit: 0 }),
    err('format', '/start_date', { format: 'date' }),
    err('type', '/end_date', { type: 'integer' })
  ], 'querystring')
  t.same(items, [
    { loc: ['query', 'limit'], msg: 'ensure this value is greater than or equal to 1', type: 'value_error.number.not_ge' },
    { loc: ['query', 'offset'], msg: 'ensure this value is greater than or equal to 0', type: 'value_error.number.not_ge' },
    { loc: ['query', 'start_date'], msg: 'invalid date format', type: 'value_error.date' },
    { loc: ['query', 'end_date'], msg: 'value is not a valid integer', type: 'type_error.integer' }
  ])
})

t.test('[D20] other keywords keep the pydantic wording', async (t) => {
  t.same(toValidationItems([err('maximum', '/limit', { limit: 1000 })], 'querystring'),
    [{ loc: ['query', 'limit'], msg: 'ensure this value is less than or equal to 1000', type: 'value_error.number.not_le' }])
  t.same(toValidationItems([err('maxLength', '/town', { limit: 200 })], 'querystring'),
    [{ loc: ['query', 'town'], msg: 'ensure this value has at most 200 characters', type: 'value_error.any_str.max_length' }])
  t.same(toValidationItems([err('type', '/dry_run', { type: 'boolean' })], 'querystring'),
    [{ loc: ['query', 'dry_run'], msg: 'value could not be parsed to a boolean', type: 'type_error.bool' }])
  t.same(toValidationItems([err('required', '', { missingProperty: 'file' })], 'body'),
    [{ loc: ['body', 'file'], msg: 'field required', type: 'value_error.missing' }])
})
