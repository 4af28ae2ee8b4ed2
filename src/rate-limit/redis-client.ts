import { Redis } from 'ioredis'

/** A client that never makes a request wait on Redis: no offline queue, no retries, a command timeout. */
export function createRedisClient (url: string): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 100, 2000)
  })
}
