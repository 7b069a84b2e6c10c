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
  queues: Queues
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
 * Every queue's counts, oldest waiting job, longest-running active job and first delayed job, in two pipelined
 * round trips on one connection (health's queueProgress and BullMQ's getJobCounts, a round trip or a script per
 * queue, cost 3.3 ms of CPU a scrape together).
 */
async function readQueues(m: ServiceMetrics, queues: Queues): Promise<void> {
  const keys = Object.keys(QUEUES) as QueueKey[]
  const qs = keys.map((k) => queues.get(k))
  const client = (await qs[0].client) as unknown as Redis
  const pipe = client.pipeline()
  for (const q of qs) {
    // Jobs enter `wait` on the left and leave on the right: the rightmost is the oldest. `delayed` is ordered by due time.
    pipe
      .llen(q.keys.wait)
      .zcard(q.keys.prioritized)
      .lrange(q.keys.active, 0, 99)
      .zcard(q.keys.delayed)
      .zcard(q.keys.failed)
      .lindex(q.keys.wait, -1)
      .zrange(q.keys.delayed, 0, 0)
  }
  const replies = ((await pipe.exec()) ?? []).map(([err, v]) => {
    if (err) throw err
    return v
  })
  const now = Date.now()
  const times = client.pipeline()
  const per = qs.map((q, i) => {
    const [waiting, prioritized, active, delayed, failed, oldest, firstDelayed] = replies.slice(i * 7, i * 7 + 7) as [
      number,
      number,
      string[],
      number,
      number,
      string | null,
      string[],
    ]
    if (oldest) times.hget(q.toKey(oldest), 'timestamp')
    for (const id of active) times.hget(q.toKey(id), 'processedOn')
    if (firstDelayed[0]) times.hget(q.toKey(firstDelayed[0]), 'timestamp')
    return { waiting: waiting + prioritized, active, delayed, failed, oldest: !!oldest, firstDelayed: !!firstDelayed[0] }
  })
  const stamps = ((await times.exec()) ?? []).map(([, v]) => Number(v ?? now))
  const age = (at: number) => Math.max(0, (now - at) / 1000)
  m.queueJobs.reset()
  per.forEach((p, i) => {
    const queue = keys[i]
    const oldestAt = p.oldest ? stamps.shift()! : now
    const started = stamps.splice(0, p.active.length)
    const delayedAt = p.firstDelayed ? stamps.shift()! : now
    m.queueJobs.set({ queue, state: 'waiting' }, p.waiting)
    m.queueJobs.set({ queue, state: 'active' }, p.active.length)
    m.queueJobs.set({ queue, state: 'delayed' }, p.delayed)
    m.queueJobs.set({ queue, state: 'failed' }, p.failed)
    m.queueOldest.set({ queue }, age(oldestAt))
    m.queueLongestActive.set({ queue }, age(Math.min(now, ...started)))
    // Accepted points not yet stored: waiting, being stored, or waiting out a retry after an outage.
    if (queue === 'ingest') m.persistLag.set(Math.max(age(oldestAt), age(Math.min(now, ...started)), age(delayedAt)))
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
   * The queues are read on a connection of their own without auto-pipelining (as the API's queues are, see
   * api/server.ts): on one with it, each of BullMQ's commands cost about 250 µs of CPU, 10 ms per scrape.
   * Returns what stops using the source.
   */
  add(source: ClusterSource): () => Promise<void> {
    const open = {
      sql: source.sql,
      queues: new Queues(source.config, createRedis(source.config, { enableAutoPipelining: false }), () => {}, { ownsConnection: true }),
    }
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
    const [redis, postgres] = await Promise.allSettled([within(readQueues(m, source.queues)), within(readDatabase(m, source.sql))])
    m.clusterUp.set({ dependency: 'redis' }, redis.status === 'fulfilled' ? 1 : 0)
    m.clusterUp.set({ dependency: 'postgres' }, postgres.status === 'fulfilled' ? 1 : 0)
    // A dependency that did not answer leaves no stale value behind: its gauges are absent until it answers.
    if (redis.status === 'rejected') for (const g of [m.queueJobs, m.queueOldest, m.queueLongestActive, m.persistLag]) g.reset()
    if (postgres.status === 'rejected')
      for (const g of [m.dbProbe, m.rollupPending, m.rollupLag, m.compactionBacklog, m.alertLag, m.deliveriesQueued]) g.reset()
  }
}
