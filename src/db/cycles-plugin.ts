import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { CyclesRepository } from './cycles.js'

declare module 'fastify' {
  interface FastifyInstance {
    cycles: CyclesRepository
  }
}

/** `app.cycles`: reads about whole cycles (statistics, changes, freshness) on `app.database`. */
async function cyclesRepository (app: FastifyInstance): Promise<void> {
  app.decorate('cycles', new CyclesRepository(app.database.db))
}

export default fp(cyclesRepository, { name: 'cycles-repository', dependencies: ['database'] })
