// The gauges read from the queue and the database at each scrape: the same values from every process (what
// Redis and PostgreSQL hold), so a dashboard takes max() over instances. Each read has a deadline: a scrape
// while Redis or PostgreSQL is down answers at once, with those gauges absent and scrape_dependency_up 0.
import type { Config } from '../config.js'
import type { Sql } from '../db.js'
import type { Redis } from 'ioredis'
import type { Gauge, LabelValues } from 'prom-client'
import { QUEUES, type QueueKey } from '../jobs.js'
import { Queues } from '../queues.js'
import { createRedis, isCluster } from '../redis.js'
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
 * Queues' gauges, read by a script inside Redis: for each queue (five keys, and its job hashes' prefix as an
 * argument) the counts, and the enqueue time of the oldest waiting job, the start of the longest-running active one
 * (of the 100 started first) and the enqueue time of the first delayed one (false when there is none). Jobs enter
 * `wait` on the left and leave on the right, so its rightmost is the oldest; `active` is filled the same way;
 * `delayed` is ordered by due time. A queue's keys, its jobs' hashes included, share one hash tag, so on a Redis
 * Cluster the script is called once per queue, on that queue's node.
 */
const QUEUE_GAUGES_LUA = `
local out = {}
for q = 0, #KEYS / 5 - 1 do
  local k, prefix = q * 5, ARGV[q + 1]
  local function at(id, field)
    if not id then return false end
    return tonumber(redis.call('HGET', prefix .. id, field)) or false
  end
  local started = false
  for _, id in ipairs(redis.call('LRANGE', KEYS[k + 3], -100, -1)) do
    local t = at(id, 'processedOn')
    if t and (not started or t < started) then started = t end
  end
  local o = #out
  out[o + 1] = redis.call('LLEN', KEYS[k + 1]) + redis.call('ZCARD', KEYS[k + 2])
  out[o + 2] = redis.call('LLEN', KEYS[k + 3])
  out[o + 3] = redis.call('ZCARD', KEYS[k + 4])
  out[o + 4] = redis.call('ZCARD', KEYS[k + 5])
  out[o + 5] = at(redis.call('LINDEX', KEYS[k + 1], -1), 'timestamp')
  out[o + 6] = started
  out[o + 7] = at(redis.call('ZRANGE', KEYS[k + 4], 0, 0)[1], 'timestamp')
end
return out`
const PER_QUEUE = 7

/** The script's reply, PER_QUEUE values a queue in the order asked: waiting, active, delayed, failed, oldest, started, first delayed. */
type QueueGaugesReply = (number | null)[]
type WithQueueGauges = Redis & { queueGauges(numberOfKeys: number, ...args: string[]): Promise<QueueGaugesReply> }

/**
 * Every queue's gauges: one script call for them all on a single Redis (a call per queue, and its reply, cost a
 * scrape more CPU than the script's work), and a call per queue, all sent at once, on a Redis Cluster, which
 * refuses a script whose keys are in several hash slots.
 */
async function readQueues(m: ServiceMetrics, held: Held, { queues, redis }: Open): Promise<void> {
  const keys = Object.keys(QUEUES) as QueueKey[]
  const call = (names: QueueKey[]) => {
    const qs = names.map((k) => queues.get(k))
    const keyNames = qs.flatMap((q) => [q.keys.wait, q.keys.prioritized, q.keys.active, q.keys.delayed, q.keys.failed])
    return redis.queueGauges(keyNames.length, ...keyNames, ...qs.map((q) => q.toKey('')))
  }
  const replies = isCluster(redis) ? (await Promise.all(keys.map((k) => call([k])))).flat() : await call(keys)
  const now = Date.now()
  const age = (at: number | null) => (at === null ? 0 : Math.max(0, (now - at) / 1000))
  keys.forEach((queue, i) => {
    const [waiting, active, delayed, failed, oldest, started, firstDelayed] = replies.slice(i * PER_QUEUE, (i + 1) * PER_QUEUE)
    held.set(m.queueJobs, `${queue} waiting`, { queue, state: 'waiting' }, waiting!)
    held.set(m.queueJobs, `${queue} active`, { queue, state: 'active' }, active!)
    held.set(m.queueJobs, `${queue} delayed`, { queue, state: 'delayed' }, delayed!)
    held.set(m.queueJobs, `${queue} failed`, { queue, state: 'failed' }, failed!)
    held.set(m.queueOldest, queue, { queue }, age(oldest))
    held.set(m.queueLongestActive, queue, { queue }, age(started))
    // Accepted points not yet stored: waiting, being stored, or waiting out a retry after an outage.
    if (queue === 'ingest') held.set(m.persistLag, '', {}, Math.max(age(oldest), age(started), age(firstDelayed)))
  })
}

/**
 * The database's gauges, in one statement (a second one, and its round trip, cost a scrape more CPU than its work).
 * Its time through this process's pool is the pool's probe: a pool starved of connections shows as waiting there.
 * Each part is an index scan or a small table: rollup_pending is drained every refresh, the partial index
 * point_blocks_writes holds only write blocks, alerts is a row per alert.
 */
async function readDatabase(m: ServiceMetrics, held: Held, sql: Sql): Promise<void> {
  const started = performance.now()
  const [row] = await sql<[{ pending: number; rollup_lag: number | null; backlog: number; alert_lag: number | null; queued: number }]>`
    select
      (select count(*)::int from rollup_pending) as pending,
      (select extract(epoch from now() - min(coalesce(r.refreshed_at, s.created_at)))::float8
         from (select distinct stat_id from rollup_pending) p join stats s on s.id = p.stat_id left join rollup_state r using (stat_id)) as rollup_lag,
      (select count(*)::int from point_blocks where seq > 0) as backlog,
      (select extract(epoch from now() - min(coalesce(last_evaluated_at, created_at)))::float8 from alerts) as alert_lag,
      (select count(*)::int from alert_deliveries where status = 'queued') as queued`
  const pool = { pool: 'primary' }
  held.set(m.dbProbe, 'primary', pool, (performance.now() - started) / 1000)
  const max = (sql as unknown as { options?: { max?: number } }).options?.max
  if (max) held.set(m.dbPoolMax, 'primary', pool, max)
  held.set(m.rollupPending, '', {}, row.pending)
  // A stat never refreshed (no rollup_state row) counts from its creation.
  held.set(m.rollupLag, '', {}, row.rollup_lag ?? 0)
  held.set(m.compactionBacklog, '', {}, row.backlog)
  held.set(m.alertLag, '', {}, row.alert_lag ?? 0)
  held.set(m.deliveriesQueued, '', {}, row.queued)
}

/**
 * Sets gauges' series only when their value changed: prom-client's set() hashes the labels and makes a new series
 * object at each call (about 1 kB of garbage; some 50 calls a scrape, as much as the rest of the reads), and most
 * of these values are the same from one scrape to the next. reset() removes a gauge's series and what was held of it.
 */
class Held {
  private readonly values = new Map<Gauge, Map<string, number>>()

  set<T extends string>(gauge: Gauge<T>, key: string, labels: LabelValues<T>, value: number): void {
    let held = this.values.get(gauge as Gauge)
    if (!held) this.values.set(gauge as Gauge, (held = new Map()))
    if (held.get(key) === value) return
    held.set(key, value)
    gauge.set(labels, value)
  }

  /** Removes every series of the gauge (prom-client's reset() leaves a gauge without labels at 0, a wrong value). */
  reset(gauge: Gauge): void {
    gauge.reset()
    gauge.remove({})
    this.values.delete(gauge)
  }
}

/** Reads the cluster gauges through the sources of this process (the newest one that is open). */
export class ClusterGauges {
  private readonly sources: Open[] = []
  private last = 0
  private running: Promise<void> | undefined
  private readonly held = new Held()

  constructor(private readonly m: ServiceMetrics) {}

  /**
   * The queues are read on a connection of their own, with the gauges' script defined on it once, and without
   * auto-pipelining (as the API's queues are, see api/server.ts). Returns what stops using the source.
   */
  add(source: ClusterSource): () => Promise<void> {
    const redis = createRedis(source.config, { enableAutoPipelining: false }) as WithQueueGauges
    redis.defineCommand('queueGauges', { lua: QUEUE_GAUGES_LUA })
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
    const { m, held } = this
    const [redis, postgres] = await Promise.allSettled([within(readQueues(m, held, source)), within(readDatabase(m, held, source.sql))])
    held.set(m.clusterUp, 'redis', { dependency: 'redis' }, redis.status === 'fulfilled' ? 1 : 0)
    held.set(m.clusterUp, 'postgres', { dependency: 'postgres' }, postgres.status === 'fulfilled' ? 1 : 0)
    // A dependency that did not answer leaves no stale value behind: its gauges are absent until it answers.
    if (redis.status === 'rejected') for (const g of [m.queueJobs, m.queueOldest, m.queueLongestActive, m.persistLag]) held.reset(g)
    if (postgres.status === 'rejected')
      for (const g of [m.dbProbe, m.rollupPending, m.rollupLag, m.compactionBacklog, m.alertLag, m.deliveriesQueued]) held.reset(g)
  }
}
