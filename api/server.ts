// The web process: builds the dependencies, listens, and shuts down gracefully on SIGTERM.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { pathToFileURL } from 'node:url'
import { loadConfigOrExit, type Config } from '../shared/config.js'
import { createSql } from '../shared/db.js'
import { createLogger, type Logger } from '../shared/log.js'
import { Outages } from '../shared/outages.js'
import { createRedis, RedisSettings } from '../shared/redis.js'
import type { Redis } from 'ioredis'
import { countRedisCommands, reportIoCountsOnSignal } from '../shared/io-counts.js'
import { Queues } from '../shared/queues.js'
import { ReadPool } from '../shared/read-replica.js'
import { KeyResolver } from '../shared/auth/key-resolver.js'
import { onShutdown } from '../shared/shutdown.js'
import { surviveClosedSocketWrites } from '../shared/driver-guard.js'
import { PointBatcher } from '../shared/ingest/batcher.js'
import { cancelBatch } from '../shared/points/repo.js'
import { Idempotency } from '../shared/ingest/idempotency.js'
import { Ingest } from '../shared/ingest/ingest.js'
import { Limits } from '../shared/ingest/limits.js'
import { StatDirectory } from '../shared/stats/directory.js'
import { serveMetrics, type MetricsListener } from '../shared/metrics/listener.js'
import { requestMetrics } from '../shared/metrics/instrument.js'
import { createApp } from './app.js'
import { directAnswers, directWrites } from './direct-writes.js'
import { startStatsd, type RunningStatsd } from './statsd-server.js'
import type { AppDeps } from './context.js'
import { dayCache } from '../shared/stats/day-cache.js'

export interface RunningApi {
  server: Server
  url: string
  deps: AppDeps
  /** The StatsD listener, when STATSD_PORT is set. */
  statsd: RunningStatsd | undefined
  /** The /metrics listener, when METRICS_PORT is set. */
  metrics: MetricsListener | undefined
  close(): Promise<void>
}

/** Opens the API's connections (nothing is shared with other components). */
export function createDeps(config: Config, log: Logger): AppDeps {
  dayCache.resize(config.rollupCacheBytes)
  const sql = createSql(config.databaseUrl, { applicationName: 'metrics-web', countRoundTrips: config.ioCounts })
  // Benchmark instrumentation, off unless IO_COUNTS=1: wraps each command sent.
  const counted = (r: Redis) => (config.ioCounts ? countRedisCommands(r) : r)
  const redis = counted(createRedis(config))
  const outages = new Outages(log, { postgres: () => sql`select 1`, redis: () => redis.ping() })
  const redisSettings = new RedisSettings(redis, config, log)
  // The queues get a connection of their own, without auto-pipelining. BullMQ defines its Lua scripts (about
  // fifty) as commands on the connection it is given, and ioredis' auto-pipelining builds a Pipeline per tick
  // that copies every command defined on its connection: with them, a job add cost 200 to 250 µs of CPU here,
  // without them 70 to 90. The rate and allowance checks keep auto-pipelining on `redis`.
  const queues = new Queues(config, counted(createRedis(config, { enableAutoPipelining: false })), (err) => outages.report(err), {
    ownsConnection: true,
  })
  const limits = new Limits(redis, config)
  const directory = new StatDirectory(sql)
  const batcher = new PointBatcher(queues, (batchId) => cancelBatch(sql, batchId))
  const ingest = new Ingest({
    config,
    sql,
    directory,
    limits,
    idempotency: new Idempotency(redis, config),
    batcher,
    redisSettings,
    onRecordFailed: (err) => outages.report(err),
  })
  const subscriber = createRedis(config, { maxRetriesPerRequest: null, enableAutoPipelining: false })
  const reads = new ReadPool(config, sql, log)
  return {
    config,
    sql,
    reads,
    redis,
    log,
    queues,
    keys: new KeyResolver(sql),
    limits,
    directory,
    batcher,
    ingest,
    subscriber,
    outages,
    redisSettings,
  }
}

/** Starts listening on config.port (0 picks a free port) and resolves once it is listening. */
export async function startApi(config: Config, log: Logger, deps: AppDeps = createDeps(config, log)): Promise<RunningApi> {
  // Not awaited: with Redis down the API must still start (and say so on /health); ioredis subscribes once it connects.
  deps.directory.subscribe(config, deps.subscriber).catch((err) => log.warn('stat cache subscription failed', { error: err }))
  const app = createApp(deps)
  // With METRICS_PORT, requests and points are counted by a middleware ahead of every other; on its own port.
  const metrics = config.metricsPort === undefined ? undefined : await serveMetrics(config, log, deps)
  const counting = metrics && requestMetrics(deps, metrics.metrics)
  if (counting) app.middleware.unshift(counting.middleware as never)
  // Slow clients: Node's default lets a request take 300 s to arrive, so a client dripping a body holds a
  // connection (and its buffers) that long. Headers must arrive within 10 s and the whole request within
  // HTTP_REQUEST_TIMEOUT_MS, checked every second (Node's default check runs every 30 s); then 408 and close.
  const requestTimeout = config.httpRequestTimeoutMs
  // The legacy single writes this process can decide in memory skip Koa (direct-writes.ts).
  const handler = app.callback()
  const server = createServer(
    {
      requestTimeout,
      headersTimeout: Math.min(10_000, requestTimeout),
      connectionsCheckingInterval: Math.min(1_000, requestTimeout / 2),
    },
    directWrites(deps, handler, metrics?.metrics),
  )
  server.listen(config.port)
  server.keepAliveTimeout = 65_000 // longer than common load balancers' idle timeout
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject))
  if (config.webhookAllowLoopback && !config.webhookAllowPrivate) {
    log.info(
      'development: webhook targets on loopback (127.0.0.1, ::1) are allowed; other private targets are refused (WEBHOOK_ALLOW_PRIVATE=0 refuses loopback too, =1 allows every private target)',
    )
  }
  const { port } = server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  const statsd =
    config.statsdPort === undefined ? undefined : await startStatsd(counting?.depsFor('statsd') ?? deps, config.statsdPort, log)
  const close = async () => {
    // Packets already taken are written before the connections they need are closed.
    await statsd?.close()
    await metrics?.close()
    // Stop accepting, let in-flight requests finish, then cut idle keep-alive sockets.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeIdleConnections()
    const force = setTimeout(() => server.closeAllConnections(), Math.max(100, config.shutdownTimeoutMs - 1000))
    await closed
    clearTimeout(force)
    await deps.batcher.drain()
    deps.outages.close()
    deps.keys.close()
    deps.redisSettings.close()
    await deps.limits.close()
    await deps.queues.close()
    deps.subscriber.disconnect()
    deps.redis.disconnect()
    await deps.reads.close()
    await deps.sql.end({ timeout: 2 })
  }
  return { server, url, deps, statsd, metrics, close }
}

async function main(): Promise<void> {
  const config = loadConfigOrExit()
  const log = createLogger(config).child({ component: 'web' })
  surviveClosedSocketWrites(log)
  const api = await startApi(config, log)
  if (config.ioCounts) reportIoCountsOnSignal(() => ({ directWrites: directAnswers.count }))
  log.info(`listening on ${api.url}`)
  onShutdown(log, config.shutdownTimeoutMs, () => api.close())
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main()
