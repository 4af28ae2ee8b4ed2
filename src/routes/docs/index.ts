import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import swagger, { type StaticDocumentSpec } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { OPENAPI_JSON, operations } from '../../generated/openapi.js'
import { projectRoot } from '../../project-root.js'

/** The contract at the project root (copied into the container). */
const OPENAPI_PATH = join(projectRoot(), 'openapi.yaml')

/** Swagger UI's home; the app exempts it from rate limiting. */
export const DOCS_PREFIX = '/docs'

/** The contract as the first app of this process read it: later apps (tests build hundreds) reuse it. */
let parsed: { yamlText: string, json: string } | undefined

/** The contract as maintained (static mode, nothing derived from routes); Swagger UI without a CDN. */
const docs: FastifyPluginAsyncTypebox = async (app) => {
  // The document from its JSON, generated from openapi.yaml (parsing the YAML cost each start ~0.2 s of CPU).
  const document = JSON.parse(OPENAPI_JSON) as StaticDocumentSpec['document'] & { servers?: Array<{ url: string }> }
  await app.register(swagger, { mode: 'static', specification: { document } })
  parsed ??= { yamlText: readFileSync(OPENAPI_PATH, 'utf8'), json: JSON.stringify(app.swagger()) }
  const { yamlText, json } = parsed

  app.route({
    ...operations.getOpenApiJson,
    handler: async (_request, reply) => await reply.type('application/json; charset=utf-8').send(json as never)
  })
  app.route({
    ...operations.getOpenApiYaml,
    handler: async (_request, reply) => await reply.type('application/yaml; charset=utf-8').send(yamlText)
  })

  // GET / (not in the contract): people go to the docs, clients find it by Link (RFC 8631).
  app.get('/', { config: { cacheControl: 'public, max-age=86400' } }, async (_request, reply) => {
    return await reply.code(302).header('location', `${DOCS_PREFIX}/`)
      .header('link', `<${operations.getOpenApiJson.url}>; rel="service-desc"; type="application/json", <${DOCS_PREFIX}/>; rel="service-doc"`)
      .send({ detail: `See ${DOCS_PREFIX}/ for the documentation and ${operations.getOpenApiJson.url} for the contract.` })
  })

  // "Try it out" may call this server and the document's servers; nothing else.
  const servers = (document.servers ?? []).map((s) => new URL(s.url).origin)
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    uiConfig: { deepLinking: true, docExpansion: 'list', displayOperationId: true, defaultModelsExpandDepth: 1 },
    theme: { title: 'Fuel Price Service API' },
    staticCSP: [
      "default-src 'self'",
      "base-uri 'self'",
      "connect-src 'self' " + servers.join(' '),
      "img-src 'self' data:",
      "script-src 'self'",
      "style-src 'self' 'unsafe-inline'", // Swagger UI sets inline style attributes
      "object-src 'none'",
      "frame-ancestors 'self'"
    ].join('; '),
    transformSpecification: (spec) => ({
      ...spec,
      servers: [{ url: '/', description: 'This server' }, ...(spec.servers ?? [])]
    })
  })
}

export default fp(docs, { name: 'docs-routes' })
