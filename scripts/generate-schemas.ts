/**
 * openapi.yaml → src/generated/openapi.ts (TypeBox 0.34, keyed by operationId, and the document as
 * JSON text); and the settings
 * schema of src/config.ts → the README's settings table and `.env.example`
 * (scripts/settings-docs.ts). Deterministic, so `npm run generate -- --check` fails CI when a
 * committed file drifts from its source. `--root DIR` works on the copy of the files under DIR.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { parse } from 'yaml'
import { envExample, settingsTable, withSettingsTable, type SettingsSchema } from './settings-docs.js'

type JsonSchema = Record<string, any>

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

export function generate (yamlText: string): string {
  const doc = parse(yamlText) as JsonSchema
  const schemas: Record<string, JsonSchema> = doc.components?.schemas ?? {}
  const out: string[] = [
    '// GENERATED from openapi.yaml by scripts/generate-schemas.ts — do not edit.',
    '// Run `npm run generate` after changing openapi.yaml; CI runs `npm run generate -- --check`.',
    '/* eslint-disable */',
    "import { Type, type Static } from '@sinclair/typebox'",
    ''
  ]

  for (const name of orderByDependencies(schemas)) {
    out.push(`export const ${name} = ${toTypeBox(schemas[name] as JsonSchema, '', { [name]: true })}`)
    out.push(`export type ${name} = Static<typeof ${name}>`, '')
  }

  const operations: string[] = []
  for (const [path, item] of Object.entries<JsonSchema>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method]
      if (op === undefined) continue
      const id: string = op.operationId
      if (typeof id !== 'string') throw new Error(`${method.toUpperCase()} ${path} has no operationId`)
      const Pascal = id[0]!.toUpperCase() + id.slice(1)
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: JsonSchema) => deref(doc, p))
      const query = params.filter((p) => p.in === 'query')
      const props = query.map((p) => {
        const schema = { ...p.schema, ...(p.description !== undefined ? { description: p.description } : {}) }
        const ts = toTypeBox(schema, '  ')
        // A parameter with a default is always present once validated (the validator fills the
        // default in before it checks `required`), so handlers see it typed as present.
        const present = p.required === true || p.schema?.default !== undefined
        return `  ${p.name}: ${present ? ts : `Type.Optional(${ts})`}`
      })
      out.push(`export const ${Pascal}Query = Type.Object({${props.length > 0 ? '\n' + props.join(',\n') + '\n' : ''}})`)
      out.push(`export type ${Pascal}Query = Static<typeof ${Pascal}Query>`)
      // Path parameters are always required (OpenAPI); the route's URL names them `:name`.
      const pathParams = params.filter((p) => p.in === 'path')
      if (pathParams.length > 0) {
        const fields = pathParams.map((p) => `  ${p.name}: ${toTypeBox({ ...p.schema, ...(p.description !== undefined ? { description: p.description } : {}) }, '  ')}`)
        out.push(`export const ${Pascal}Params = Type.Object({\n${fields.join(',\n')}\n})`)
        out.push(`export type ${Pascal}Params = Static<typeof ${Pascal}Params>`)
      }
      const responses: string[] = []
      for (const [status, resp] of Object.entries<JsonSchema>(op.responses ?? {})) {
        const r = deref(doc, resp)
        const schema = r.content?.['application/json']?.schema
        if (schema !== undefined) responses.push(`  ${status}: ${toTypeBox(schema, '  ')}`)
      }
      out.push(`export const ${Pascal}Responses = {${responses.length > 0 ? '\n' + responses.join(',\n') + '\n' : ''}}`, '')
      const paramsSchema = pathParams.length > 0 ? `params: ${Pascal}Params, ` : ''
      const schema = `{ operationId: '${id}', ${paramsSchema}querystring: ${Pascal}Query, response: ${Pascal}Responses }`
      const url = path.replace(/\{(\w+)\}/g, ':$1')
      operations.push(`  ${id}: { method: '${method.toUpperCase()}', url: '${url}', schema: ${schema}, config: ${routePolicy(doc, op)} }`)
    }
  }
  out.push('/**')
  out.push(' * Every operation of openapi.yaml by operationId: method, URL, schemas and route policy, ready to declare a')
  out.push(' * route with `app.route({ ...operations.listPrices, handler })`.')
  out.push(' */')
  out.push(`export const operations = {\n${operations.join(',\n')}\n} as const`)
  out.push('export type OperationId = keyof typeof operations', '')
  // The whole document as JSON text: parsing openapi.yaml costs a start ~0.2 s of CPU.
  out.push('/** openapi.yaml as JSON text, for the docs routes: the service parses no YAML at run time. */')
  out.push(`export const OPENAPI_JSON = ${JSON.stringify(JSON.stringify(doc))}`, '')
  return out.join('\n')
}

/**
 * The route policy the document already states: D17 a public Cache-Control on the success answer
 * makes the route publicly cacheable; D22 a route that documents neither RateLimit-* headers nor
 * a 429 is exempt from the limit.
 */
function routePolicy (doc: JsonSchema, op: JsonSchema): string {
  const responses = Object.entries<JsonSchema>(op.responses ?? {}).map(([status, r]) => [status, deref(doc, r)] as const)
  const success = responses.find(([status]) => status.startsWith('2'))?.[1]
  const cacheControl = success?.headers?.['Cache-Control']
  const publicCache = cacheControl !== undefined && String(deref(doc, cacheControl).schema?.const ?? '').startsWith('public')
  const limited = responses.some(([status, r]) => status === '429' || r.headers?.['RateLimit-Limit'] !== undefined)
  return `{ publicCache: ${publicCache}${limited ? '' : ', rateLimit: false'} }`
}

function deref (doc: JsonSchema, node: JsonSchema): JsonSchema {
  if (typeof node.$ref !== 'string') return node
  const parts = node.$ref.replace(/^#\//, '').split('/')
  let target: any = doc
  for (const part of parts) target = target?.[part]
  if (target === undefined) throw new Error(`Unresolved $ref ${node.$ref}`)
  return deref(doc, target)
}

function refName (ref: string): string {
  const m = /^#\/components\/schemas\/(\w+)$/.exec(ref)
  if (m === null) throw new Error(`Unsupported $ref ${ref}`)
  return m[1]!
}

/** Components in an order where every schema follows the ones it references. */
function orderByDependencies (schemas: Record<string, JsonSchema>): string[] {
  const done: string[] = []
  const visit = (name: string, stack: string[]): void => {
    if (done.includes(name)) return
    if (stack.includes(name)) throw new Error(`Recursive schema ${name} is not supported`)
    for (const ref of refsOf(schemas[name])) visit(ref, [...stack, name])
    done.push(name)
  }
  for (const name of Object.keys(schemas)) visit(name, [])
  return done
}

function refsOf (node: unknown): string[] {
  if (node === null || typeof node !== 'object') return []
  if (Array.isArray(node)) return node.flatMap(refsOf)
  const n = node as JsonSchema
  if (typeof n.$ref === 'string') return [refName(n.$ref)]
  return Object.values(n).flatMap(refsOf)
}

const KEPT = ['description', 'format', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum',
  'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'default', 'additionalProperties']

/** The keywords of a type-array schema that belong to each member type. */
const TYPE_KEYWORDS: Record<string, string[]> = {
  string: ['format', 'pattern', 'minLength', 'maxLength'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  array: ['items', 'minItems', 'maxItems'],
  object: ['properties', 'required', 'additionalProperties']
}

function options (schema: JsonSchema, skip: string[] = []): string {
  const entries = KEPT.filter((k) => schema[k] !== undefined && !skip.includes(k))
    .map((k) => `${k}: ${JSON.stringify(schema[k])}`)
  return entries.length > 0 ? `{ ${entries.join(', ')} }` : ''
}

function withOptions (call: string, args: string, opts: string): string {
  if (opts === '') return `${call}(${args})`
  return args === '' ? `${call}(${opts})` : `${call}(${args}, ${opts})`
}

function toTypeBox (schema: JsonSchema, indent: string, _self: Record<string, boolean> = {}): string {
  if (typeof schema.$ref === 'string') return refName(schema.$ref)
  if (schema.const !== undefined) return withOptions('Type.Literal', JSON.stringify(schema.const), options(schema))
  if (Array.isArray(schema.enum)) {
    // A plain JSON Schema `enum` (not a union of consts), so a bad value fails with one `enum`
    // error that the 422 mapping can word as pydantic does (D20); the static type is the union.
    const union = schema.enum.map((v: unknown) => JSON.stringify(v)).join(' | ')
    const body: JsonSchema = { ...(schema.type !== undefined ? { type: schema.type } : {}), enum: schema.enum }
    for (const k of KEPT) if (schema[k] !== undefined) body[k] = schema[k]
    return `Type.Unsafe<${union}>(${JSON.stringify(body)})`
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) {
      return withOptions('Type.Union', `[${schema[key].map((s: JsonSchema) => toTypeBox(s, indent)).join(', ')}]`, options(schema))
    }
  }
  // OpenAPI 3.1 type arrays (`type: [string, 'null']`): a union of one schema per type, each
  // keeping the keywords that apply to it; description and default stay on the union.
  if (Array.isArray(schema.type)) {
    const types = schema.type as string[]
    if (types.length === 1) return toTypeBox({ ...schema, type: types[0] }, indent)
    const shared: JsonSchema = {}
    for (const k of ['description', 'default']) if (schema[k] !== undefined) shared[k] = schema[k]
    const members = types.map((type) => {
      const member: JsonSchema = { type }
      for (const k of TYPE_KEYWORDS[type] ?? []) if (schema[k] !== undefined) member[k] = schema[k]
      return toTypeBox(member, indent)
    })
    return withOptions('Type.Union', `[${members.join(', ')}]`, options(shared))
  }
  switch (schema.type) {
    case 'string': return withOptions('Type.String', '', options(schema))
    case 'integer': return withOptions('Type.Integer', '', options(schema))
    case 'number': return withOptions('Type.Number', '', options(schema))
    case 'boolean': return withOptions('Type.Boolean', '', options(schema))
    case 'null': return withOptions('Type.Null', '', options(schema))
    case 'array': return withOptions('Type.Array', toTypeBox(schema.items ?? {}, indent), options(schema))
    case 'object': {
      const required: string[] = schema.required ?? []
      const inner = indent + '  '
      const props = Object.entries<JsonSchema>(schema.properties ?? {}).map(([key, value]) => {
        const ts = toTypeBox(value, inner)
        return `${inner}${key}: ${required.includes(key) ? ts : `Type.Optional(${ts})`}`
      })
      const body = props.length > 0 ? `{\n${props.join(',\n')}\n${indent}}` : '{}'
      return withOptions('Type.Object', body, options(schema))
    }
    case undefined: return withOptions('Type.Unknown', '', options(schema))
    default: throw new Error(`Unsupported schema type ${JSON.stringify(schema.type)}`)
  }
}

/** A file this script writes: where, from what, and the text it must have. */
export interface GeneratedFile { path: string, source: string, text: string }

/** Every generated file of the checkout at `root`, from its openapi.yaml and the settings schema. */
export function generatedFiles (root: string, settings?: SettingsSchema): GeneratedFile[] {
  const read = (path: string): string => readFileSync(join(root, path), 'utf8')
  return [
    { path: 'src/generated/openapi.ts', source: 'openapi.yaml', text: generate(read('openapi.yaml')) },
    { path: 'README.md', source: 'the settings in src/config.ts', text: withSettingsTable(read('README.md'), settingsTable(settings)) },
    { path: '.env.example', source: 'the settings in src/config.ts', text: envExample(settings) }
  ]
}

/** The generated files under `root` whose committed text differs from what their source gives. */
export function driftedFiles (root: string, settings?: SettingsSchema): GeneratedFile[] {
  return generatedFiles(root, settings).filter((file) => {
    let current = ''
    try { current = readFileSync(join(root, file.path), 'utf8') } catch { /* missing counts as drift */ }
    return current !== file.text
  })
}

function main (): void {
  const { values } = parseArgs({ options: { check: { type: 'boolean' }, root: { type: 'string' } } })
  const root = values.root === undefined ? ROOT : resolve(values.root)
  const drifted = driftedFiles(root)
  if (values.check === true) {
    for (const file of drifted) console.error(`${file.path} is out of date with ${file.source}: run \`npm run generate\` and commit it.`)
    if (drifted.length > 0) process.exit(1)
    console.log('src/generated/openapi.ts, README.md\'s settings table and .env.example match their sources')
    return
  }
  for (const file of drifted) {
    mkdirSync(dirname(join(root, file.path)), { recursive: true })
    writeFileSync(join(root, file.path), file.text)
    console.log(`wrote ${file.path}`)
  }
  if (drifted.length === 0) console.log('every generated file was up to date')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main()
