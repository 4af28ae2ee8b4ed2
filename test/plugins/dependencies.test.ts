import Fastify, { type FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import t from '../support/file-test.js'
import { buildApp, servicePlugins, type ServicePlugin } from '../../src/app.js'
import { testConfig, testDatabase } from '../helper.js'
import readCache from '../../src/read-cache/index.js'
import pricesRepository from '../../src/db/prices-plugin.js'
import errors from '../../src/errors/index.js'
import pricesRoutes from '../../src/routes/prices/index.js'

// The registration order is kept by declared dependencies, not comments: registering a plugin
// before one it needs fails at start with Fastify's own error, naming the missing plugin.
t.test('a plugin registered before what it depends on fails at start, naming it', async (t) => {
  const cases = [
    { plugin: pricesRepository as FastifyPluginAsync, name: 'prices-repository', missing: 'database' },
    { plugin: readCache as FastifyPluginAsync, name: 'read-cache', missing: 'prices-repository' },
    { plugin: errors as FastifyPluginAsync, name: 'errors', missing: 'rate-limit' },
    { plugin: pricesRoutes as FastifyPluginAsync, name: 'prices-routes', missing: 'prices-repository' }
  ]
  for (const { plugin, name, missing } of cases) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(plugin).ready() }, {
      code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED',
      message: `The dependency '${missing}' of plugin '${name}' is not registered`
    }, name)
    await app.close()
  }
})

t.test('servicePlugins lists every plugin under its own fastify-plugin name, each once', async (t) => {
  const plugins = servicePlugins({ config: testConfig() })
  const metaName = (plugin: object): unknown => (plugin as Record<symbol, { name?: string } | undefined>)[Symbol.for('plugin-meta')]?.name
  t.strictSame(plugins.map((p) => metaName(p.plugin)), plugins.map((p) => p.name))
  t.equal(new Set(plugins.map((p) => p.name)).size, plugins.length)
  t.strictSame(plugins.map((p) => p.name), [
    'http-caching', 'metrics', 'cors', 'rate-limit', 'http-server', 'errors', 'database', 'prices-repository', 'cycles-repository', 'read-cache',
    'cache-purge', 'cache-invalidation', 'bearer-auth', 'metrics-routes', 'docs-routes', 'health-routes', 'prices-routes', 'towns-routes',
    'cycles-routes', 'ingest-routes', 'cycle-withdrawal-routes', 'admin-page'
  ])
})

t.test('a plugin swapped for an empty one of the same name satisfies its dependants (the bench ablation)', async (t) => {
  const config = testConfig()
  const database = await testDatabase()
  const empty = (name: string): ServicePlugin => ({ name, plugin: fp(async () => {}, { name }) })
  // The list is made with the file's database, as buildApp makes it: without one, the database
  // plugin would open PGlite on the configured DATA_DIR (./data of the checkout).
  const plugins = servicePlugins({ config, database }).map((p) => p.name === 'cors' ? empty('cors') : p)
  const app = await buildApp({ config, plugins, database })
  t.teardown(async () => { await app.close() })
  const res = await app.inject({ method: 'GET', url: '/v1/health', headers: { origin: 'https://fuelkenya.com' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['access-control-allow-origin'], undefined, 'no CORS plugin, no CORS header')
})
