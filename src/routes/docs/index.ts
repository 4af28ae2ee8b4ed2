import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import swagger, { type StaticDocumentSpec } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { operations } from '../../generated/openapi.js'
import { projectRoot } from '../../project-root.js'

/** The contract at the project root (copied into the container). */
const OPENAPI_PATH = join(projectRoot(), 'openapi.yaml')

/** Swagger UI's home; the app exempts it from rate limiting. */
export const DOCS_PREFIX = '/docs'

/** openapi.yaml as the first app of this process parsed it: later apps (tests build hundreds) reuse it. */
let parsed: { yamlText: string, document: StaticDocumentSpec['document'], json: string } | undefined

/** The contract as maintained (static mode, nothing derived from routes); Swagger UI without a CDN. */
const docs: FastifyPluginAsyncTypebox = async (app) => {
  const path = OPENAPI_PATH
  const yamlText = parsed?.yamlText ?? readFileSync(path, 'utf8')

  await app.register(swagger, { mode: 'static', specification: parsed === undefined ? { path, baseDir: dirname(path) } : { document: parsed.document } })
  parsed ??= { yamlText, document: app.swagger() as StaticDocumentSpec['document'], json: JSON.stringify(app.swagger()) }
  const document = parsed.document as { servers?: Array<{ url: string }> }
  const json = parsed.json

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
