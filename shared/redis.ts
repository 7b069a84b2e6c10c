// Redis connections. Every key the service writes goes under config.redisPrefix
// so that several deployments (or test files) can share one server.
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis'
import type { Config } from './config.js'
import { unavailable, type AppError } from './errors.js'
import { parseClusterUrl } from './redis-url.js'

/**
 * A client for REDIS_URL: a single node, or ioredis' cluster client for a `redis+cluster://` URL. The cluster
 * client answers the same commands (it routes each to its slot's master), so it is typed as `Redis` and the rest
 * of the service need not know; what does differ is kept out of the service's way by construction: every
 * multi-key command, script and MULTI names keys of one hash slot (queues `{name}`, the sign-in throttle
 * `{throttle}`), and batches of unrelated keys are sent as separate commands, which the cluster client
 * pipelines per node.
 */
function connect(url: string, opts: RedisOptions): Redis {
  const cluster = parseClusterUrl(url)
  if (!cluster) return new Redis(url, opts)
  const { enableAutoPipelining, enableOfflineQueue, enableReadyCheck, lazyConnect, ...nodeOptions } = opts
  const clusterOptions: ClusterOptions = {
    redisOptions: { ...nodeOptions, username: cluster.username, password: cluster.password, ...(cluster.tls ? { tls: {} } : {}) },
    enableAutoPipelining,
    enableOfflineQueue,
    enableReadyCheck,
    lazyConnect,
    // A master that died is replaced by its replica within the cluster's node timeout (plus an election): keep
    // retrying the slot's commands through such a failover (50 tries, 200 ms apart: about 10 s) instead of failing
    // them at once, and re-read the slot map promptly.
    maxRedirections: 50,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: 2000,
    clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
  }
  return new Cluster(cluster.nodes, clusterOptions) as unknown as Redis
}

/** Whether a client is ioredis' cluster client (a few admin reads must ask every master). */
export function isCluster(redis: Redis): boolean {
  return (redis as unknown as { isCluster?: boolean }).isCluster === true
}

/** The masters of a cluster client, or the client itself: what a command about the server (INFO, SCAN) must visit. */
export function serverNodes(redis: Redis): Redis[] {
  return isCluster(redis) ? (redis as unknown as Cluster).nodes('master') : [redis]
}

/** Waits until a client is ready (a cluster client knows its masters only then). */
export async function ready(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return
  await new Promise<void>((resolve, reject) => {
    redis.once('ready', resolve)
    redis.once('end', () => reject(new Error('Redis connection ended')))
  })
}

/**
 * Deletes every key matching a pattern, on every master (test clean-up, tools). Keys are deleted one command
 * each: a cluster refuses a DEL of keys in several slots.
 */
export async function deleteKeys(redis: Redis, pattern: string): Promise<number> {
  return deleteChosenKeys(redis, pattern, () => true)
}

/** Unlinks the keys matching `pattern` that `chosen` picks (one SCAN per node, whatever the number of keys chosen). */
export async function deleteChosenKeys(redis: Redis, pattern: string, chosen: (key: string) => boolean): Promise<number> {
  await ready(redis)
  let deleted = 0
  for (const node of serverNodes(redis)) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
      deleted += (await Promise.all(keys.filter(chosen).map((k) => redis.unlink(k)))).reduce((a, b) => a + b, 0)
      cursor = next
    } while (cursor !== '0')
  }
  return deleted
}

/**
 * A connection for request-path commands: it fails fast instead of queueing
 * while Redis is down, so a write is refused rather than left hanging.
 */
export function createRedis(config: Pick<Config, 'redisUrl'>, opts: RedisOptions = {}): Redis {
  const redis = connect(config.redisUrl, {
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
  const redis = connect(config.redisUrl, { maxRetriesPerRequest: null, enableReadyCheck: false })
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

  constructor(
    private readonly redis: Redis,
    private readonly config: Pick<Config, 'env'>,
    private readonly log?: { warn(message: string, meta?: object): unknown; error(message: string, meta?: object): unknown },
  ) {
    redis.on('ready', this.onReady)
    this.timer = setInterval(this.onReady, 10_000)
    this.timer.unref()
    if (redis.status === 'ready') this.onReady()
  }

  /** Reads the settings now; logs when they change to something that can lose data. */
  async refresh(): Promise<RedisServerSettings> {
    // On a cluster every master holds queued points: the weakest setting among them is the cluster's.
    const nodes = await Promise.all(
      serverNodes(this.redis).map(async (node) => {
        const info = `${await node.info('memory')}\n${await node.info('persistence')}`
        const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim()
        return {
          maxmemoryPolicy: field('maxmemory_policy') ?? 'unknown',
          aof: field('aof_enabled') === '1' ? 'on' : 'off',
        } as RedisServerSettings
      }),
    )
    const next: RedisServerSettings = {
      maxmemoryPolicy: nodes.find((n) => evicts(n.maxmemoryPolicy))?.maxmemoryPolicy ?? nodes[0]?.maxmemoryPolicy ?? 'unknown',
      aof: nodes.length && nodes.every((n) => n.aof === 'on') ? 'on' : 'off',
    }
    const before = this.current
    this.current = next
    if (next.maxmemoryPolicy !== before?.maxmemoryPolicy && evicts(next.maxmemoryPolicy)) {
      this.log?.error(
        `Redis runs with maxmemory-policy ${next.maxmemoryPolicy}, which may evict queued points: writes are refused until it is noeviction`,
        { maxmemory_policy: next.maxmemoryPolicy },
      )
    }
    if (next.aof !== before?.aof && next.aof === 'off' && this.config.env === 'production') {
      this.log?.warn(
        'Redis runs without AOF persistence: a Redis restart loses the points queued and not yet stored (turn on appendonly)',
        { aof: 'off' },
      )
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
    if (policy && evicts(policy))
      return unavailable(
        `writes are refused: Redis runs with maxmemory-policy ${policy}, which may evict accepted points before they are stored (it must be noeviction)`,
      )
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
