// The gauges read from the queue and the database at each scrape: the same values from every process (what
// Redis and PostgreSQL hold), so a dashboard takes max() over instances. Each read has a deadline: a scrape
// while Redis or PostgreSQL is down answers at once, with those gauges absent and scrape_dependency_up 0.
import type { Config } from '../config.js'
import type { Sql } from '../db.js'
import type { Redis } from 'ioredis'
import { QUEUES, type QueueKey } from '../jobs.js'
import { Queues } from '../queues.js'
import { createRedis } from '../redis.js'
import type { ServiceMetrics } from './registry.js'

/** What a process lends the scrape: its pool, and the settings to reach its queues. */
export interface ClusterSource {
  sql: Sql
  config: Pick<Config, 'redisUrl' | 'redisPrefix'>
}

interface Open {
  sql: Sql
  /** For the queues' key names; its connection is `redis`. */
  queues: Queues
  redis: WithQueueGauges
}

const DEADLINE_MS = 2000
/** Reads at most this often per process, however often it is scraped (several scrapers, a dashboard refresh). */
const CACHE_MS = 2000

function within<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer')), DEADLINE_MS)
    }),
  ]).finally(() => clearTimeout(timer))
}

/**
 * One queue's gauges, read by a script inside Redis: the counts, and the enqueue time of the oldest waiting job, the
 * start of the longest-running active one (of the 100 started first) and the enqueue time of the first delayed one
 * (false when there is none). Jobs enter `wait` on the left and leave on the right, so its rightmost is the oldest;
 * `active` is filled the same way; `delayed` is ordered by due time. A queue's keys, its jobs' hashes included,
 * share one hash tag, so the script runs on one node of a Redis Cluster too.
 */
const QUEUE_GAUGES_LUA = `
local function at(id, field)
  if not id then return false end
  return tonumber(redis.call('HGET', ARGV[1] .. id, field)) or false
end
local started = false
for _, id in ipairs(redis.call('LRANGE', KEYS[3], -100, -1)) do
  local t = at(id, 'processedOn')
  if t and (not started or t < started) then started = t end
end
return {
  redis.call('LLEN', KEYS[1]) + redis.call('ZCARD', KEYS[2]),
  redis.call('LLEN', KEYS[3]),
  redis.call('ZCARD', KEYS[4]),
  redis.call('ZCARD', KEYS[5]),
  at(redis.call('LINDEX', KEYS[1], -1), 'timestamp'),
  started,
  at(redis.call('ZRANGE', KEYS[4], 0, 0)[1], 'timestamp'),
}`

type QueueGaugesReply = [
  waiting: number,
  active: number,
  delayed: number,
  failed: number,
  oldest: number | null,
  started: number | null,
  firstDelayed: number | null,
]
type WithQueueGauges = Redis & { queueGauges(...args: string[]): Promise<QueueGaugesReply> }

/**
 * Every queue's gauges, a script call per queue, all sent at once (BullMQ's getJobCounts and a look-up of each
 * job's times cost a round trip or a script per queue and several ms of CPU a scrape; a pipeline across queues is
 * refused by a Redis Cluster, where the queues' keys are on different nodes).
 */
async function readQueues(m: ServiceMetrics, { queues, redis }: Open): Promise<void> {
  const keys = Object.keys(QUEUES) as QueueKey[]
  const qs = keys.map((k) => queues.get(k))
  const replies = await Promise.all(
    qs.map((q) => redis.queueGauges(q.keys.wait, q.keys.prioritized, q.keys.active, q.keys.delayed, q.keys.failed, q.toKey(''))),
  )
  const now = Date.now()
  const age = (at: number | null) => (at === null ? 0 : Math.max(0, (now - at) / 1000))
  m.queueJobs.reset()
  replies.forEach(([waiting, active, delayed, failed, oldest, started, firstDelayed], i) => {
    const queue = keys[i]
    m.queueJobs.set({ queue, state: 'waiting' }, waiting)
    m.queueJobs.set({ queue, state: 'active' }, active)
    m.queueJobs.set({ queue, state: 'delayed' }, delayed)
    m.queueJobs.set({ queue, state: 'failed' }, failed)
    m.queueOldest.set({ queue }, age(oldest))
    m.queueLongestActive.set({ queue }, age(started))
    // Accepted points not yet stored: waiting, being stored, or waiting out a retry after an outage.
    if (queue === 'ingest') m.persistLag.set(Math.max(age(oldest), age(started), age(firstDelayed)))
  })
}

async function readDatabase(m: ServiceMetrics, sql: Sql): Promise<void> {
  const started = performance.now()
  await sql`select 1`
  m.dbProbe.set({ pool: 'primary' }, (performance.now() - started) / 1000)
  const max = (sql as unknown as { options?: { max?: number } }).options?.max
  if (max) m.dbPoolMax.set({ pool: 'primary' }, max)
  // Each is an index scan or a small table: rollup_pending is drained every refresh, the partial index
  // point_blocks_writes holds only write blocks, alerts is a row per alert.
  const [row] = await sql<[{ pending: number; rollup_lag: number | null; backlog: number; alert_lag: number | null; queued: number }]>`
    select
      (select count(*)::int from rollup_pending) as pending,
      (select extract(epoch from now() - min(coalesce(r.refreshed_at, s.created_at)))::float8
         from (select distinct stat_id from rollup_pending) p join stats s on s.id = p.stat_id left join rollup_state r using (stat_id)) as rollup_lag,
      (select count(*)::int from point_blocks where seq > 0) as backlog,
      (select extract(epoch from now() - min(coalesce(last_evaluated_at, created_at)))::float8 from alerts) as alert_lag,
      (select count(*)::int from alert_deliveries where status = 'queued') as queued`
  m.rollupPending.set(row.pending)
  // A stat never refreshed (no rollup_state row) counts from its creation.
  m.rollupLag.set(row.rollup_lag ?? 0)
  m.compactionBacklog.set(row.backlog)
  m.alertLag.set(row.alert_lag ?? 0)
  m.deliveriesQueued.set(row.queued)
}

/** Reads the cluster gauges through the sources of this process (the newest one that is open). */
export class ClusterGauges {
  private readonly sources: Open[] = []
  private last = 0
  private running: Promise<void> | undefined

  constructor(private readonly m: ServiceMetrics) {}

  /**
   * The queues are read on a connection of their own, with the gauges' script defined on it once, and without
   * auto-pipelining (as the API's queues are, see api/server.ts). Returns what stops using the source.
   */
  add(source: ClusterSource): () => Promise<void> {
    const redis = createRedis(source.config, { enableAutoPipelining: false }) as WithQueueGauges
    redis.defineCommand('queueGauges', { numberOfKeys: 5, lua: QUEUE_GAUGES_LUA })
    const open: Open = { sql: source.sql, redis, queues: new Queues(source.config, redis, () => {}, { ownsConnection: true }) }
    this.sources.push(open)
    return async () => {
      this.sources.splice(this.sources.indexOf(open), 1)
      await open.queues.close()
    }
  }

  /** Refreshes the gauges unless they were read within CACHE_MS; concurrent scrapes share one read. */
  refresh(): Promise<void> {
    if (Date.now() - this.last < CACHE_MS) return Promise.resolve()
    return (this.running ??= this.read().finally(() => {
      this.last = Date.now()
      this.running = undefined
    }))
  }

  private async read(): Promise<void> {
    const source = this.sources.at(-1)
    if (!source) return
    const { m } = this
    const [redis, postgres] = await Promise.allSettled([within(readQueues(m, source)), within(readDatabase(m, source.sql))])
    m.clusterUp.set({ dependency: 'redis' }, redis.status === 'fulfilled' ? 1 : 0)
    m.clusterUp.set({ dependency: 'postgres' }, postgres.status === 'fulfilled' ? 1 : 0)
    // A dependency that did not answer leaves no stale value behind: its gauges are absent until it answers.
    if (redis.status === 'rejected') for (const g of [m.queueJobs, m.queueOldest, m.queueLongestActive, m.persistLag]) g.reset()
    if (postgres.status === 'rejected')
      for (const g of [m.dbProbe, m.rollupPending, m.rollupLag, m.compactionBacklog, m.alertLag, m.deliveriesQueued]) g.reset()
  }
}
