// Redis connections. Every key the service writes goes under config.redisPrefix
// so that several deployments (or test files) can share one server.
import { Redis, type RedisOptions } from 'ioredis'
import type { Config } from './config.js'
import { unavailable, type AppError } from './errors.js'

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

/** What the service needs to know about the Redis server's own settings. */
export interface RedisServerSettings {
  maxmemoryPolicy: string
  aof: 'on' | 'off'
}

/**
 * The Redis server's eviction policy and persistence, read from INFO (CONFIG is
 * often disabled on managed Redis) on start-up, on every reconnect and every
 * 10 s. Under any policy but noeviction Redis may drop queued jobs, ikeys and
 * quota counters when full, so writes are refused (writeRefusal) and health
 * fails; without AOF a restart loses every queued point, which production is
 * warned about.
 */
export class RedisSettings {
  private current: RedisServerSettings | undefined
  private readonly timer: NodeJS.Timeout
  private readonly onReady = () => void this.refresh().catch(() => {})

  constructor(private readonly redis: Redis, private readonly config: Pick<Config, 'env'>, private readonly log?: { warn(message: string, meta?: object): unknown; error(message: string, meta?: object): unknown }) {
    redis.on('ready', this.onReady)
    this.timer = setInterval(this.onReady, 10_000)
    this.timer.unref()
    if (redis.status === 'ready') this.onReady()
  }

  /** Reads the settings now; logs when they change to something that can lose data. */
  async refresh(): Promise<RedisServerSettings> {
    const info = `${await this.redis.info('memory')}\n${await this.redis.info('persistence')}`
    const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim()
    const next: RedisServerSettings = { maxmemoryPolicy: field('maxmemory_policy') ?? 'unknown', aof: field('aof_enabled') === '1' ? 'on' : 'off' }
    const before = this.current
    this.current = next
    if (next.maxmemoryPolicy !== before?.maxmemoryPolicy && evicts(next.maxmemoryPolicy)) {
      this.log?.error(`Redis runs with maxmemory-policy ${next.maxmemoryPolicy}, which may evict queued points: writes are refused until it is noeviction`, { maxmemory_policy: next.maxmemoryPolicy })
    }
    if (next.aof !== before?.aof && next.aof === 'off' && this.config.env === 'production') {
      this.log?.warn('Redis runs without AOF persistence: a Redis restart loses the points queued and not yet stored (turn on appendonly)', { aof: 'off' })
    }
    return next
  }

  /** The last settings read, if any. */
  get known(): RedisServerSettings | undefined {
    return this.current
  }

  /** Why writes must be refused now, if they must. */
  writeRefusal(): AppError | undefined {
    const policy = this.current?.maxmemoryPolicy
    if (policy && evicts(policy)) return unavailable(`writes are refused: Redis runs with maxmemory-policy ${policy}, which may evict accepted points before they are stored (it must be noeviction)`)
    return undefined
  }

  close(): void {
    clearInterval(this.timer)
    this.redis.off('ready', this.onReady)
  }
}

/** Every policy but noeviction drops keys when memory is full (the volatile-* ones those with a TTL: ikeys, quotas). */
export function evicts(policy: string): boolean {
  return policy !== 'noeviction' && policy !== 'unknown'
}
