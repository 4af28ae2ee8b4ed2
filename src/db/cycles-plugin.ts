import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { CycleReads } from './cycles.js'

declare module 'fastify' {
  interface FastifyInstance {
    cycles: CycleReads
  }
}

/** `app.cycles`: reads about whole cycles (statistics, changes, freshness) on `app.database`. */
async function cyclesRepository (app: FastifyInstance): Promise<void> {
  app.decorate('cycles', new CycleReads(app.database.db))
}

export default fp(cyclesRepository, { name: 'cycles-repository', dependencies: ['database'] })
