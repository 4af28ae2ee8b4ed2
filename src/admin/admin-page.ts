import { existsSync } from 'node:fs'
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { projectRoot } from '../project-root.js'

const ADMIN_PAGE_DIR = join(projectRoot(), 'dist', 'admin')

const ADMIN_PATH = '/admin'

/** The admin page: this origin only, no inline script, no framing, nothing in a Referer. */
export const ADMIN_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Revalidated on every load (ETag), so a rebuilt page is never mixed with an older script.
  'cache-control': 'no-cache'
}

interface AdminPageOptions {
  root?: string
}

async function adminPage (app: FastifyInstance, options: AdminPageOptions): Promise<void> {
  const root = options.root ?? ADMIN_PAGE_DIR
  if (!existsSync(join(root, 'admin.js'))) {
    app.log.warn({ root }, 'the admin page is not built: run `npm run build` to serve /admin')
  }
  // Every answer of this scope, errors included, carries the headers.
  app.addHook('onRequest', async (_request, reply) => { void reply.headers(ADMIN_HEADERS) })
  await app.register(fastifyStatic, { root, prefix: `${ADMIN_PATH}/`, cacheControl: false, index: 'index.html' })
  app.get(ADMIN_PATH, async (_request, reply) => await reply.sendFile('index.html'))
  // Browsers ask for /favicon.ico: a 204 keeps the console clean, kept a week so it is not asked at every load.
  app.get(FAVICON_PATH, async (_request, reply) => await reply.code(204).header('cache-control', 'public, max-age=604800').send())
}

export const FAVICON_PATH = '/favicon.ico'

export default fp(adminPage, {
  name: 'admin-page',
  dependencies: ['http-caching', 'errors'],
  encapsulate: true
})
