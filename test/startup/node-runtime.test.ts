import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import fastifyStatic from '@fastify/static'
import t from '../support/file-test.js'

/**
 * D69: Node 20.19 is the floor (`engines`), the current LTS (24) the line the image runs and the
 * README recommends; no installed package asks for more than the floor, so neither line's
 * `npm install` warns. Two packages whose latest majors ask for Node 22 are held back by
 * `overrides`; what uses them is exercised here.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const FLOOR = '20.19.0'
const LTS = '24.0.0'
const { satisfies } = createRequire(import.meta.url)('semver') as { satisfies: (version: string, range: string) => boolean }
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { engines: { node: string }, overrides: Record<string, unknown>, allowScripts: Record<string, boolean> }
const lock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, 'utf8')) as { packages: Record<string, { version?: string, engines?: { node?: string } | string[], hasInstallScript?: boolean }> }

t.test('[D69] every package of the lock accepts Node 20.19 and Node 24: npm install prints no EBADENGINE', async (t) => {
  const refusing: string[] = []
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node
    if (range === undefined) continue
    for (const version of [FLOOR, LTS]) if (!satisfies(version, range)) refusing.push(`${path}@${entry.version ?? '?'} wants node ${range}, not ${version}`)
  }
  t.same(refusing, [])
  t.ok(satisfies(FLOOR, pkg.engines.node) && satisfies(LTS, pkg.engines.node), `engines ${pkg.engines.node} takes both lines`)
})

// npm 11 skips a dependency's install script unless allowScripts names it, and warns about each
// one it has no entry for; every one is denied by name, so npm ci is quiet and runs none of them
// (esbuild's only checks the binary its optional platform package already installed; scarf's is
// telemetry)
t.test('[D69] every dependency with an install script is denied by name in allowScripts', async (t) => {
  const withScripts = Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
  t.same([...new Set(withScripts)].sort(), ['@scarf/scarf', 'esbuild'])
  t.same(pkg.allowScripts, { esbuild: false, '@scarf/scarf': false })
})

t.test('[D69] the held-back packages: content-disposition 2 under @fastify/static, cookie 1 under light-my-request', async (t) => {
  t.same(pkg.overrides, { '@fastify/static': { 'content-disposition': '^2.0.1' }, 'light-my-request': { cookie: '^1.1.1' } })
  t.match(lock.packages['node_modules/@fastify/static/node_modules/content-disposition'], { version: /^2\./ })
  t.match(lock.packages['node_modules/light-my-request/node_modules/cookie'], { version: /^1\./ })
})

t.test('[D69] @fastify/static\'s download names the file through content-disposition', async (t) => {
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  await app.register(fastifyStatic, { root: `${ROOT}src/admin/page`, serve: false })
  app.get('/file', async (_request, reply) => await reply.download('admin.css', 'prices report.css'))
  const res = await app.inject('/file')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-disposition'], 'attachment; filename="prices report.css"')
  t.equal(res.body, readFileSync(`${ROOT}src/admin/page/admin.css`, 'utf8'))
})

t.test('[D69] light-my-request (inject) sends the cookies it is given through cookie\'s serializer', async (t) => {
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  app.get('/echo', async (request) => ({ cookie: request.headers.cookie }))
  const res = await app.inject({ url: '/echo', cookies: { session: 'a b;c', theme: 'dark' } })
  t.same(res.json(), { cookie: 'session=a%20b%3Bc; theme=dark' })
})
