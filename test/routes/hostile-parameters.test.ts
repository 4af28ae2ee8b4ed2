import t from '../support/file-test.js'
import { seedFixture } from './_fixtures.js'
import { build, resetData } from '../helper.js'
import { openApiDocument } from '../support/openapi-document.js'

/**
 * D48: every parameter of every read operation in openapi.yaml, given each hostile value of a
 * catalogue for its type: never a 5xx, and every refusal is the `{"detail": …}` envelope. The
 * contract's bounds (integer ranges, no NUL, years PostgreSQL stores) make these 422s.
 */
interface Parameter { name: string, in: string, schema?: { type?: string, format?: string } }
interface Operation { parameters?: Array<Parameter | { $ref: string }> }
const doc = openApiDocument() as {
  paths: Record<string, Record<string, Operation>>
  components: { parameters: Record<string, Parameter> }
}
const resolve = (p: Parameter | { $ref: string }): Parameter =>
  '$ref' in p ? doc.components.parameters[p.$ref.split('/').at(-1) ?? ''] as Parameter : p

const HOSTILE: Record<string, string[]> = {
  integer: ['Infinity', '-Infinity', 'NaN', '1e19', '9223372036854775807', '9223372036854775808', '-9223372036854775809',
    '2147483648', '-1', '1.5', '0x10', '1e3', '', '%20', '%00', '1%00', '%E0%A4%A', '99999999999999999999999999'],
  date: ['0000-01-01', '0000-01-15', '-0001-01-15', '9999-12-31', '10000-01-15', '294277-01-15', '2020-02-30',
    '2020-13-15', '15-01-2020', '2020-01-15%00', '%00', '', '2020-01-15T00:00:00Z', '%E0%A4%A'],
  string: ['%00', 'Nairobi%00', '%00Nairobi', 'a'.repeat(201), '%FF', '%E0%A4%A', '%C0%AF', "'%3B DROP TABLE fuel_prices%3B--",
    '%F0%9F%98%80', '%EF%BF%BF', '%5C', '%25', ' ', '%0A', 'N%CC%83airobi', '%C4%B0ZMIR']
}

const kind = (p: Parameter): string => p.schema?.format === 'date' ? 'date' : p.schema?.type ?? 'string'

t.test('no hostile parameter value gets a 5xx from any operation', async (t) => {
  const app = await build(t)
  await resetData()
  await seedFixture()
  let requests = 0
  let expected = 0
  for (const [path, methods] of Object.entries(doc.paths)) {
    const operation = methods.get
    if (operation === undefined) continue
    const parameters = (operation.parameters ?? []).map(resolve)
    // A valid value for every path parameter, the hostile one in turn for each parameter.
    const validPath = path.replace(/\{[^}]+\}/g, '2026-01-15')
    for (const parameter of parameters) {
      expected += (HOSTILE[kind(parameter)] ?? []).length
      for (const value of HOSTILE[kind(parameter)] ?? []) {
        const url = parameter.in === 'path'
          ? path.replace(`{${parameter.name}}`, value).replace(/\{[^}]+\}/g, '2026-01-15')
          : `${validPath}?${parameter.name}=${value}`
        const res = await app.inject({ method: 'GET', url })
        requests++
        if (res.statusCode >= 500) t.fail(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`)
        if (res.statusCode >= 400) {
          const body = res.json() as { detail?: unknown }
          if (body.detail === undefined) t.fail(`${url}: ${res.statusCode} without the envelope: ${res.body.slice(0, 200)}`)
        }
      }
    }
  }
  t.equal(requests, expected, `${requests} hostile requests, one per parameter and catalogue value`)
  t.ok(requests > 250, 'every GET operation with parameters was walked')
})

t.test('the reported cases are 422 in the D20 shape', async (t) => {
  const app = await build(t)
  for (const url of ['/v1/prices?offset=1e19', '/v1/prices?offset=9223372036854775807', '/v1/prices?offset=Infinity',
    '/v1/prices?limit=Infinity', '/v1/prices.csv?offset=Infinity', '/v1/cycles?offset=Infinity', '/v1/prices?town=%00',
    '/v1/prices?town=Nairobi%00', '/v1/prices/changes?town=Nairobi%00', '/v1/prices.csv?town=%00',
    '/v1/prices?start_date=0000-01-01', '/v1/cycles/0000-01-15', '/v1/prices/changes?valid_from=0000-01-15']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 422, url)
    const detail = (res.json() as { detail: Array<{ loc: string[] }> }).detail
    t.equal(detail.length, 1, `${url}: one item`)
  }
  t.same((await app.inject('/v1/prices?limit=Infinity')).json(),
    { detail: [{ loc: ['query', 'limit'], msg: 'value is not a valid integer', type: 'type_error.integer' }] })
  t.same((await app.inject('/v1/prices?town=Nairobi%00')).json(),
    { detail: [{ loc: ['query', 'town'], msg: 'string does not match regex "^[^\\x00]*$"', type: 'value_error.str.regex' }] })
})
