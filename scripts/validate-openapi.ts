/**
 * openapi.yaml, checked offline and strictly:
 *
 *   1. YAML: no duplicate keys, no parse warnings.
 *   2. The OpenAPI 3.1 JSON Schema (@seriousme/openapi-schema-validator), and every $ref resolves.
 *   3. Every schema compiles with Ajv in strict mode (JSON Schema 2020-12, OpenAPI's dialect):
 *      no unknown keywords or formats, no `required` naming an undeclared property.
 *   4. Every `example` honours its schema.
 *   5. operationIds are present, unique and camelCase; every operation has a 2xx response.
 *   6. Tags used are declared and tags declared are used; every component is referenced.
 *
 *   npm run contract          (exit 1 and one line per problem when the document is not clean)
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { parseDocument } from 'yaml'

type Json = Record<string, any>

export const OPENAPI_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', 'openapi.yaml')

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']
const COMPONENTS_ID = 'urn:openapi:components'

/** Every problem of the document; [] when it is clean. */
export async function validateOpenApi (yamlText: string): Promise<string[]> {
  const yamlDoc = parseDocument(yamlText, { uniqueKeys: true, strict: true, prettyErrors: false })
  const yamlProblems = [...yamlDoc.errors, ...yamlDoc.warnings].map((e) => `YAML: ${e.message}`)
  if (yamlDoc.errors.length > 0) return yamlProblems
  const doc = yamlDoc.toJS() as Json

  const result = await new Validator().validate(doc)
  if (!result.valid) {
    const errors = typeof result.errors === 'string'
      ? [result.errors]
      : (result.errors ?? []).map((e) => `${e.instancePath === '' ? '/' : e.instancePath} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`)
    return [...yamlProblems, ...errors.map((e) => `OpenAPI 3.1: ${e}`)]
  }
  return [...yamlProblems, ...schemaProblems(doc), ...operationProblems(doc), ...hygieneProblems(doc)]
}

/** 3 and 4: strict Ajv compilation of every schema, and examples against them. */
function schemaProblems (doc: Json): string[] {
  const problems: string[] = []
  // Type arrays (`type: [string, integer]`) are how the document writes unions, so generators type them exactly.
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true })
  addFormatsModule.default(ajv)
  ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs'])
  try {
    ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(doc.components?.schemas ?? {}) })
    ajv.getSchema(COMPONENTS_ID) // compiles every component
  } catch (err) {
    return [`components.schemas: ${(err as Error).message}`]
  }
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
    if (schema.example !== undefined) checkExample(`components.schemas.${name}`, { $ref: `#/components/schemas/${name}` }, schema.example)
  }
  for (const { where, node } of schemaHolders(doc)) {
    if (node.schema === undefined) continue
    checkExample(where, node.schema, node.example)
    for (const [key, example] of Object.entries<Json>(node.examples ?? {})) {
      if (example.value !== undefined) checkExample(`${where} examples.${key}`, node.schema, example.value)
    }
  }
  return problems

  function checkExample (where: string, schema: Json, example: unknown): void {
    let validate
    try {
      validate = ajv.compile(rewriteRefs(schema))
    } catch (err) {
      problems.push(`${where}: schema does not compile: ${(err as Error).message}`)
      return
    }
    if (example !== undefined && !validate(example)) {
      problems.push(`${where}: example does not match its schema: ${ajv.errorsText(validate.errors)}`)
    }
  }
}

/** Parameters, media types and headers: everything with a `schema` (and maybe an example). */
function schemaHolders (doc: Json): Array<{ where: string, node: Json }> {
  const out: Array<{ where: string, node: Json }> = []
  const visit = (where: string, node: unknown): void => {
    if (node === null || typeof node !== 'object') return
    if (Array.isArray(node)) { node.forEach((n, i) => visit(`${where}[${i}]`, n)); return }
    const n = node as Json
    if (n.schema !== undefined && typeof n.schema === 'object') out.push({ where, node: n })
    for (const [key, value] of Object.entries(n)) {
      if (key === 'schema' || key === 'schemas') continue // schemas are checked as schemas
      visit(`${where}.${key}`, value)
    }
  }
  visit('paths', doc.paths)
  for (const kind of ['parameters', 'responses', 'headers', 'requestBodies']) visit(`components.${kind}`, doc.components?.[kind])
  return out
}

/** 5 */
function operationProblems (doc: Json): string[] {
  const problems: string[] = []
  const seen = new Map<string, string>()
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined
      if (op === undefined) continue
      const where = `${method.toUpperCase()} ${path}`
      const id = op.operationId
      if (typeof id !== 'string') { problems.push(`${where}: no operationId`); continue }
      if (!/^[a-z][A-Za-z0-9]*$/.test(id)) problems.push(`${where}: operationId ${id} is not camelCase`)
      const other = seen.get(id)
      if (other !== undefined) problems.push(`${where}: operationId ${id} is also used by ${other}`)
      seen.set(id, where)
      if (!Object.keys(op.responses ?? {}).some((s) => /^2(\d\d|XX)$/.test(s))) problems.push(`${where}: no 2xx response`)
    }
  }
  return problems
}

/** 6 */
function hygieneProblems (doc: Json): string[] {
  const problems: string[] = []
  const declared = new Set<string>((doc.tags ?? []).map((t: Json) => t.name))
  const used = new Set<string>()
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const method of METHODS) for (const tag of item[method]?.tags ?? []) used.add(tag)
  }
  for (const tag of used) if (!declared.has(tag)) problems.push(`tag ${tag} is used but not declared`)
  for (const tag of declared) if (!used.has(tag)) problems.push(`tag ${tag} is declared but not used`)

  const refs = new Set<string>()
  const collect = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return
    if (Array.isArray(node)) { node.forEach(collect); return }
    for (const [key, value] of Object.entries(node as Json)) {
      if (key === '$ref' && typeof value === 'string') refs.add(value)
      else collect(value)
    }
  }
  collect(doc)
  for (const [kind, entries] of Object.entries<Json>(doc.components ?? {})) {
    if (kind === 'securitySchemes') continue // referenced by name from `security`, not by $ref
    for (const name of Object.keys(entries)) {
      if (!refs.has(`#/components/${kind}/${name}`)) problems.push(`components.${kind}.${name} is never referenced`)
    }
  }
  return problems
}

function rewriteRefs<T> (node: T): T {
  if (Array.isArray(node)) return node.map(rewriteRefs) as T
  if (node === null || typeof node !== 'object') return node
  const out: Json = {}
  for (const [key, value] of Object.entries(node as Json)) {
    out[key] = key === '$ref' && typeof value === 'string'
      ? value.replace(/^#\/components\/schemas\//, `${COMPONENTS_ID}#/$defs/`)
      : rewriteRefs(value)
  }
  return out as T
}

async function main (): Promise<void> {
  const problems = await validateOpenApi(readFileSync(OPENAPI_PATH, 'utf8'))
  if (problems.length > 0) {
    for (const problem of problems) console.error(`openapi.yaml: ${problem}`)
    process.exit(1)
  }
  console.log('openapi.yaml is a valid OpenAPI 3.1 document (strict checks passed)')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main()
