import Fastify, { type FastifyPluginAsync } from 'fastify'
import t from 'tap'
import readCache from '../../src/plugins/app/read-cache.js'
import pricesRepository from '../../src/plugins/app/prices-repository.js'
import errors from '../../src/plugins/app/errors.js'
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
