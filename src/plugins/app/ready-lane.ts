import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Counter } from 'prom-client'
import { JSON_CONTENT_TYPE, type ReadyBody } from '../../http/body.js'
import { requestLogsWritten } from '../../http/lazy-logger.js'
import { clientAddressOf, ReadyLane, type LaneRoute } from '../../http/ready-lane.js'
import { EXPOSED_HEADERS } from './cors.js'
import { PUBLIC_CACHE_CONTROL } from './http-caching.js'

declare module 'fastify' {
  interface FastifyInstance {
    readyLane: ReadyLaneRoutes
  }
}

/** What a route plugin uses: its lane route, and learning a URL it answered from the read cache. */
export interface ReadyLaneRoutes {
  /** The lane's view of one route (its request metrics, its media type; whether it negotiates CSV). */
  route: (url: string, options?: { negotiatesCsv?: boolean, contentType?: string }) => LaneRoute
  /** The handler answered this request from the read cache; `held` finds the same body again. */
  learn: (request: FastifyRequest, route: LaneRoute, held: () => ReadyBody | undefined) => void
  /** The same for a body the read cache keeps under `key` (`readCache.heldBody(key)`). */
  learnBody: (request: FastifyRequest, route: LaneRoute, key: string) => void
}

interface ReadyLanePluginOptions {
  /** The app's trustProxy (D23): the lane keys the limiter as `request.ip` does. */
  trustProxy: boolean | number | string[]
  /** false: never answer (the bench's ablation measures Fastify's path with it). Default true. */
  enabled?: boolean
}

/**
 * D45: the ready-answer lane (src/http/ready-lane.ts) in front of Fastify's request handler. On
 * only where it can answer exactly as Fastify's path would: the limiter answers synchronously
 * (the memory store; over Redis each request waits for its round trip anyway), request logging
 * writes nothing (LOG_LEVEL above info: Fastify logs two lines per request at info), and the
 * client address is computed as Fastify does (`TRUST_PROXY` true, false or addresses; not a hop
 * count). Off, routes still call `learn`, which then does nothing.
 */
async function readyLanePlugin (app: FastifyInstance, options: ReadyLanePluginOptions): Promise<void> {
  const lane = options.enabled === false ? undefined : createLane(app, options.trustProxy)

  app.decorate('readyLane', {
    route: (url, routeOptions) => ({
      record: app.metrics.recorder(url),
      negotiatesCsv: routeOptions?.negotiatesCsv === true,
      contentType: routeOptions?.contentType ?? JSON_CONTENT_TYPE
    }),
    learn: lane === undefined
      ? () => {}
      : (request, route, held) => { lane.learn(request.url, route, held) },
    learnBody: lane === undefined
      ? () => {}
      : (request, route, key) => { lane.learn(request.url, route, () => app.readCache.heldBody(key)) }
  } satisfies ReadyLaneRoutes)

  new Counter({
    name: 'fuel_ready_lane_answers_total',
    help: 'Cached reads answered by the ready lane, before the framework\'s routing and hooks (D45).',
    registers: [app.metrics.registry],
    collect () { this.reset(); this.inc(lane?.answered ?? 0) }
  })
  if (lane === undefined) return

  // Fastify's own request listener, attached when the instance was made; the lane goes first.
  // inject() calls Fastify's handler directly, so only requests over a socket meet the lane.
  const server = app.server
  const [fastifyHandler, ...others] = server.listeners('request') as Array<(...args: unknown[]) => void>
  if (fastifyHandler === undefined || others.length > 0) throw new Error('ready-lane: expected exactly one request listener (Fastify\'s)')
  server.removeListener('request', fastifyHandler)
  server.on('request', (request, response) => {
    if (!lane.answer(request, response)) fastifyHandler(request, response)
  })
}

/** The lane, or undefined where it could not answer exactly as Fastify's path does. */
function createLane (app: FastifyInstance, trustProxy: boolean | number | string[]): ReadyLane | undefined {
  const hitSync = app.limiter.hitSync
  const clientAddress = clientAddressOf(trustProxy)
  if (hitSync === undefined || clientAddress === undefined || requestLogsWritten(app.log, app.initialConfig.disableRequestLogging)) return undefined
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  return new ReadyLane({
    allowOrigin: app.allowedOrigin,
    exposeHeaders: EXPOSED_HEADERS,
    hit: hitSync,
    limitHeaders: app.limiter.headerValues,
    passHit: app.limiter.passHit,
    publicCacheControl: PUBLIC_CACHE_CONTROL,
    closing: () => closing
  }, clientAddress)
}

export default fp(readyLanePlugin, {
  name: 'ready-lane',
  dependencies: ['cors', 'rate-limit', 'http-caching', 'metrics', 'read-cache']
})
