import { Redis } from 'ioredis'

/**
 * A client for the rate-limit store that never makes a request wait on an absent Redis:
 * no offline queue (commands fail at once while disconnected), no retries of in-flight commands
 * across a reconnect, and a command timeout for a Redis that accepts connections but hangs.
 * Reconnection is ioredis' own, forever, backing off to one attempt every 2 s.
 */
export function createRedisClient (url: string): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 100, 2000)
  })
}
