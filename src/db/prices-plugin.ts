import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { PricesRepository } from './prices.js'

declare module 'fastify' {
  interface FastifyInstance {
    prices: PricesRepository
  }
}

/** `app.prices`: the reads and writes of fuel_prices, as prepared statements on `app.database`. */
async function pricesRepository (app: FastifyInstance): Promise<void> {
  app.decorate('prices', new PricesRepository(app.database))
}

export default fp(pricesRepository, { name: 'prices-repository', dependencies: ['database'] })
