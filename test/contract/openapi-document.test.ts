import { readFileSync } from 'node:fs'
import t from '../support/file-test.js'
import { OPENAPI_PATH, validateOpenApi } from '../../scripts/validate-openapi.js'

/** `npm run contract`: openapi.yaml passes the strict offline checks, and each check bites. */

const original = readFileSync(OPENAPI_PATH, 'utf8')

/** The document with one exact piece of text replaced (fails loudly if the text moved). */
const variant = (from: string, to: string): string => {
  if (!original.includes(from)) throw new Error(`openapi.yaml no longer contains ${JSON.stringify(from)}`)
  return original.replace(from, to)
}

t.test('openapi.yaml is a valid OpenAPI 3.1 document and passes every strict check', async (t) => {
  t.same(await validateOpenApi(original), [])
})

t.test('each strict check reports what it finds', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['duplicate YAML key', variant('      operationId: listTowns\n', '      operationId: listTowns\n      operationId: listTowns2\n'), /^YAML: Map keys must be unique/],
    ['OpenAPI structure: a response without description',
      variant("        '200':\n          description: Town names.\n", "        '200':\n          summary: Town names.\n"), /^OpenAPI 3\.1: /],
    ['a misspelt schema keyword', variant('            minimum: 1\n            maximum: 1000\n', '            minimun: 1\n            maximum: 1000\n'), /schema does not compile: strict mode: unknown keyword: "minimun"/],
    ['an unknown format', variant('          type: string\n          format: date\n          description: First valid day', '          type: string\n          format: day\n          description: First valid day'), /unknown format "day"/],
    ['an example that breaks its schema', variant('              example:\n                detail: Database unreachable\n', '              example:\n                detail: 500\n'), /GET \/v1\/health|paths\.\/v1\/health.*example does not match its schema/],
    ['a duplicate operationId', variant('      operationId: listTowns\n', '      operationId: listPrices\n'), /GET \/v1\/towns: operationId listPrices is also used by GET \/v1\/prices/],
    ['an undeclared tag', variant('      tags: [towns]\n', '      tags: [places]\n'), /tag places is used but not declared/],
    ['an unused component', variant('components:\n  securitySchemes:\n', 'components:\n  securitySchemes:\n') + '    Unused:\n      type: string\n', /components\.schemas\.Unused is never referenced/]
  ]
  for (const [name, text, expected] of cases) {
    const problems = await validateOpenApi(text)
    t.ok(problems.some((p) => expected.test(p)), `${name}: ${JSON.stringify(problems.slice(0, 3))}`)
  }
})

t.test('every const also has an enum of its one value; open objects say so (generators type them exactly)', async (t) => {
  const { parse } = await import('yaml')
  const doc = parse(readFileSync(OPENAPI_PATH, 'utf8')) as unknown
  const consts: Array<{ at: string, schema: Record<string, unknown> }> = []
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) { node.forEach((n, i) => walk(n, `${at}/${i}`)); return }
    if (node === null || typeof node !== 'object') return
    const o = node as Record<string, unknown>
    if ('const' in o && !('in' in o)) consts.push({ at, schema: o })
    for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`)
  }
  walk(doc, '#')
  t.equal(consts.length, 15, 'the status of health, ingest, dry run and withdrawal, the openapi version, two Cache-Control values, Accept-Encoding, seven reads\' Surrogate-Key (D70)')
  for (const { at, schema } of consts) t.same(schema.enum, [schema.const], at)
  const json = (doc as { paths: Record<string, { get: { responses: { 200: { content: { 'application/json': { schema: { properties: Record<string, { additionalProperties?: unknown }> } } } } } } }> }).paths['/v1/openapi.json']?.get.responses[200].content['application/json'].schema.properties
  t.equal(json?.info?.additionalProperties, true)
  t.equal(json?.paths?.additionalProperties, true)
})

t.test('unions are type arrays and no parameter is deprecated (generators type both exactly)', async (t) => {
  const { parse } = await import('yaml')
  const doc = parse(readFileSync(OPENAPI_PATH, 'utf8')) as unknown
  const unions: string[] = []
  const deprecated: string[] = []
  const nullable: string[] = []
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) { node.forEach((n, i) => walk(n, `${at}/${i}`)); return }
    if (node === null || typeof node !== 'object') return
    const o = node as Record<string, unknown>
    if ('anyOf' in o || 'oneOf' in o) unions.push(at)
    if ('in' in o && o.deprecated === true) deprecated.push(`${String(o.in)} ${String(o.name)}`)
    if (Array.isArray(o.type) && o.type.includes('null')) nullable.push(at.replace(/^#\/components\/schemas\//, ''))
    for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`)
  }
  walk(doc, '#')
  t.strictSame(unions, [], 'no anyOf/oneOf')
  t.strictSame(deprecated, [], 'D43: ?dry_run and ?format are honoured but not documented')
  t.strictSame(nullable, [
    'DryRunCycle/properties/previous_valid_from',
    'PriceWarning/properties/previous',
    'CycleSummary/properties/published_at',
    'FuelChange/properties/previous',
    'FuelChange/properties/change',
    'PriceChange/properties/previous_valid_from',
    'Health/properties/latest_valid_from'
  ])
})
