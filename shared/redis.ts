// Redis connections. Every key the service writes goes under config.redisPrefix
// so that several deployments (or test files) can share one server.
import { Redis, type RedisOptions } from 'ioredis'
import type { Config } from './config.js'

/**
 * A connection for request-path commands: it fails fast instead of queueing
 * while Redis is down, so a write is refused rather than left hanging.
 */
export function createRedis(config: Pick<Config, 'redisUrl'>, opts: RedisOptions = {}): Redis {
  const redis = new Redis(config.redisUrl, {
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    enableOfflineQueue: true,
    // Commands issued in the same tick (many requests' rate and allowance checks) go out in one write.
    enableAutoPipelining: true,
    lazyConnect: false,
    ...opts,
  })
  // Connection errors reach every command that needed Redis (and /health reports them);
  // without a listener ioredis would also print each reconnect attempt to stderr.
  redis.on('error', () => {})
  return redis
}

/** A connection for BullMQ workers, which block on Redis and must retry forever. */
export function createWorkerRedis(config: Pick<Config, 'redisUrl'>): Redis {
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null, enableReadyCheck: false })
  redis.on('error', () => {}) // the BullMQ worker reports its own connection errors
  return redis
}

/** Prefixes a key with the deployment's namespace. */
export function redisKey(config: Pick<Config, 'redisPrefix'>, ...parts: string[]): string {
  return [config.redisPrefix, ...parts].join(':')
}
