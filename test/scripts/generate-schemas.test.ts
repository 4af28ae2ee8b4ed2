import { readFileSync } from 'node:fs'
import t from '../support/file-test.js'
import { generate } from '../../scripts/generate-schemas.js'
import { parse } from 'yaml'
import { OPENAPI_JSON } from '../../src/generated/openapi.js'
import { operations, type GetItemParams, type ListItemsQuery } from './fixtures/generator/mini.expected.js'

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/generator/${name}`, import.meta.url), 'utf8')

// openapi-box's habit: a small document in, the TypeBox module out, compared byte for byte, so a
// change to the generator shows up as a reviewable diff of mini.expected.ts.
t.test('a small document generates exactly the committed TypeBox module', async (t) => {
  t.equal(generate(fixture('mini.yaml')), fixture('mini.expected.ts'))
})

t.test('the generated module carries openapi.yaml as JSON text, the document the docs routes serve', async (t) => {
  t.strictSame(JSON.parse(OPENAPI_JSON), parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')))
})

t.test('the generated module types defaulted parameters as present and ties each operation to its schemas', async (t) => {
  // Compile-time: `limit` has a default, so it is a number, never undefined; `q` is optional.
  const query: ListItemsQuery = { limit: 5, kind: 'a' }
  const limit: number = query.limit
  t.equal(limit, 5)
  t.strictSame(operations.listItems.schema.querystring.required, ['limit', 'kind'])
  t.equal(operations.addItem.method, 'POST')
  t.equal(operations.addItem.url, '/v1/items')
  t.strictSame(Object.keys(operations.listItems.schema.response), ['200', '404'])
  // A path parameter: its own schema, and the URL in Fastify's `:name` form.
  t.equal(operations.getItem.url, '/v1/items/:item_id')
  t.strictSame(operations.getItem.schema.params.required, ['item_id'])
  const id: GetItemParams['item_id'] = 1
  t.equal(id, 1)
})

t.test('the generator refuses what it cannot represent', async (t) => {
  const doc = (paths: string, schemas = ''): string => `openapi: 3.1.0\npaths:\n${paths}\ncomponents:\n  schemas:\n${schemas}`
  t.throws(() => generate(doc('  /x:\n    get:\n      responses: {}')), { message: 'GET /x has no operationId' })
  t.throws(() => generate(doc('  {}', '    A:\n      type: object\n      properties:\n        b:\n          $ref: \'#/components/schemas/A\'')),
    { message: 'Recursive schema A is not supported' })
  t.throws(() => generate(doc('  /x:\n    get:\n      operationId: x\n      parameters:\n        - $ref: \'#/components/parameters/Nope\'\n      responses: {}')),
    { message: 'Unresolved $ref #/components/parameters/Nope' })
  t.throws(() => generate(doc('  {}', '    A:\n      type: tuple')), { message: 'Unsupported schema type "tuple"' })
})

t.test('type arrays become unions, each member keeping the keywords of its type', async (t) => {
  const out = generate([
    'openapi: 3.1.0', 'paths: {}', 'components:', '  schemas:', '    A:', '      type: object', '      properties:',
    '        day:', '          type: [string, \'null\']', '          format: date', '          description: A day, or none.',
    '        loc:', '          type: array', '          items:', '            type: [string, integer]',
    '        size:', '          type: [integer, \'null\']', '          minimum: 0', '          pattern: ignored',
    '        only:', '          type: [string]', '          maxLength: 3'
  ].join('\n'))
  t.match(out, [
    'export const A = Type.Object({',
    '  day: Type.Optional(Type.Union([Type.String({ format: "date" }), Type.Null()], { description: "A day, or none." })),',
    '  loc: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Integer()]))),',
    '  size: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),',
    '  only: Type.Optional(Type.String({ maxLength: 3 }))',
    '})'
  ].join('\n'))
})

t.test('route policy comes from the document: public Cache-Control, and no limit where none is documented', async (t) => {
  t.same(operations.listItems.config, { publicCache: true })
  t.same(operations.addItem.config, { publicCache: false })
  t.same(operations.getItem.config, { publicCache: false, rateLimit: false })
})
