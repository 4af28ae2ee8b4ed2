import { readFileSync } from 'node:fs'
import t from 'tap'
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
