import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { projectRoot } from '../project-root.js'

export interface DocsPluginOptions {
  /** The contract; default `openapi.yaml` at the project root (copied into the container). */
  path?: string
}

export const OPENAPI_PATH = join(projectRoot(), 'openapi.yaml')

/**
 * The contract, served as it is maintained: `GET /v1/openapi.yaml` (the file's own bytes),
 * `GET /v1/openapi.json`, and Swagger UI at `/docs` with its bundled assets (no CDN). Nothing
 * is derived from the routes: @fastify/swagger runs in static mode on openapi.yaml.
 *
 * None of it is rate limited. The two /v1 routes say so with `config.rateLimit: false`; the
 * Swagger UI routes are declared by @fastify/swagger-ui, which takes no route config, so
 * `exemptDocsFromRateLimit` marks them (test/docs asserts both).
 */
async function docs (app: FastifyInstance, options: DocsPluginOptions): Promise<void> {
  const path = options.path ?? OPENAPI_PATH
  const yamlText = readFileSync(path, 'utf8')

  await app.register(swagger, { mode: 'static', specification: { path, baseDir: dirname(path) } })
  const document = app.swagger() as { servers?: Array<{ url: string }> }
  const json = JSON.stringify(document)

  // operationId: getOpenApiJson
  app.get('/v1/openapi.json', { config: { rateLimit: false } }, async (_request, reply) => {
    return await reply.type('application/json; charset=utf-8').send(json)
  })
  // operationId: getOpenApiYaml
  app.get('/v1/openapi.yaml', { config: { rateLimit: false } }, async (_request, reply) => {
    return await reply.type('application/yaml; charset=utf-8').send(yamlText)
  })

  // "Try it out" may call this server (a relative URL resolves against the page) and the ones
  // the document names; nothing else, and no script or style from anywhere else.
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

export const DOCS_PREFIX = '/docs'

/**
 * An onRoute hook giving every route under /docs `config.rateLimit: false`. The app adds it
 * before registering the rate limiter, so it runs before the limiter's own onRoute hook, which
 * then leaves those routes alone, wherever this plugin is registered.
 */
export function exemptDocsFromRateLimit (routeOptions: RouteOptions): void {
  if (routeOptions.url === DOCS_PREFIX || routeOptions.url.startsWith(DOCS_PREFIX + '/')) {
    routeOptions.config = { ...routeOptions.config, rateLimit: false }
  }
}

export default docs
