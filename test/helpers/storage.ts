// Assertions on what a write left behind: stats, points (persisted or still
// queued) and daily allowance used. "Nothing stored" means all three stay put.
import type { Sql } from '../../shared/db.js'
import { createRedis, redisKey } from '../../shared/redis.js'
import type { TestApp } from './app.js'

/** Waits until the ingest queue has nothing waiting, delayed or running (workers must be started). */
export async function settle(app: TestApp, timeoutMs = 10_000): Promise<void> {
  const queue = app.api.deps.queues.get('ingest')
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')
    if (Object.values(counts).every((n) => n === 0)) return
    if (Date.now() > deadline) throw new Error(`ingest queue did not drain: ${JSON.stringify(counts)}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/**
 * Pauses the scheduled rollup refresh (and waits out a running one), for tests that fold rollups
 * themselves and must know a read comes from the unfolded tail.
 */
export async function pauseRollups(app: TestApp): Promise<void> {
  const rollups = app.api.deps.queues.get('rollups')
  await rollups.pause()
  for (let i = 0; i < 100 && (await rollups.getActiveCount()) > 0; i++) await new Promise((r) => setTimeout(r, 50))
}

type Bucket = [bucket: number, count: number, sum: number, min: number, max: number]

/**
 * A stat's buckets in each rollup table beside the same buckets aggregated from its points (hot rows and
 * blocks alike): what the refreshes must have produced. Sums are rounded to `sumDigits` significant digits
 * when given (doubles added in another order differ in the last bits).
 */
export async function rollupsBesidePoints(
  sql: Sql,
  statId: string,
  sumDigits?: number,
): Promise<Array<{ table: string; rolled: Bucket[]; raw: Bucket[] }>> {
  const sum = (x: number) => (sumDigits ? Number(x.toPrecision(sumDigits)) : x)
  const out = []
  for (const [table, step] of [
    ['rollups_1m', 60],
    ['rollups_5m', 300],
    ['rollups_1h', 3600],
    ['rollups_1d', 86_400],
  ] as const) {
    const rolled =
      await sql`select extract(epoch from bucket)::bigint as b, count, sum, min, max from ${sql(table)} where stat_id = ${statId} order by 1`
    const raw = await sql`
      select (floor(extract(epoch from ts) / ${step}) * ${step})::bigint as b, count(*) as count, sum(value) as sum, min(value) as min, max(value) as max
      from stat_points(${statId}, '-infinity', 'infinity') group by 1 order by 1`
    const buckets = (rows: typeof raw) => rows.map((r): Bucket => [r.b, Number(r.count), sum(r.sum), r.min, r.max])
    out.push({ table, rolled: buckets(rolled), raw: buckets(raw) })
  }
  return out
}

export interface Stored {
  stats: number
  points: number
  /** Points queued in Redis and not yet persisted (`points`: stored, as rows or in day blocks). */
  queued: number
  /** Today's allowance used, as counted in Redis. */
  quotaUsed: number
}

export async function stored(app: TestApp, accountId: string): Promise<Stored> {
  const [{ stats }] = await app.sql<{ stats: number }[]>`select count(*)::int as stats from stats where account_id = ${accountId}`
  const [{ points }] = await app.sql<{ points: number }[]>`
    select ((select count(*) from points p join stats s on s.id = p.stat_id where s.account_id = ${accountId})
      + (select coalesce(sum(b.n), 0) from point_blocks b join stats s on s.id = b.stat_id where s.account_id = ${accountId}))::int as points`
  const queue = app.api.deps.queues.get('ingest')
  const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'prioritized'])
  const statIds = new Set((await app.sql<{ id: string }[]>`select id from stats where account_id = ${accountId}`).map((r) => r.id))
  const queued = jobs.reduce((n, j) => n + ((j.data?.points ?? []) as Array<[string]>).filter((p) => statIds.has(p[0])).length, 0)
  // A lease's unused points go back to the day when it ends (within half a second); end it now.
  await app.api.deps.limits.giveBackLeases()
  const redis = createRedis(app.config)
  try {
    const used = await redis.get(redisKey(app.config, 'points', accountId, new Date().toISOString().slice(0, 10)))
    return { stats, points, queued, quotaUsed: Number(used ?? 0) }
  } finally {
    redis.disconnect()
  }
}

/** The persisted points of one stat, oldest first (waits for the queue to drain). */
export async function pointsOf(app: TestApp, accountId: string, stat: string): Promise<Array<{ ts: number; value: number }>> {
  await settle(app)
  const rows = await app.sql<{ ts: number; value: number }[]>`
    select extract(epoch from p.ts)::float8 as ts, p.value from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p
    where s.account_id = ${accountId} and s.name = ${stat} order by p.ts, p.value`
  return rows.map((r) => ({ ts: r.ts, value: r.value }))
}

/** The kind a stat was created with, if it exists. */
export async function kindOf(app: TestApp, accountId: string, stat: string): Promise<string | undefined> {
  const [row] = await app.sql<{ kind: string }[]>`select kind from stats where account_id = ${accountId} and name = ${stat}`
  return row?.kind
}

/** What the account holds once the queue has drained. */
export async function settledState(app: TestApp, accountId: string): Promise<Stored> {
  await settle(app)
  return stored(app, accountId)
}

/** Sets today's point counter of an account (the daily allowance used), as the server keys it. */
export async function setPointsUsedToday(app: TestApp, accountId: string, used: number): Promise<void> {
  const redis = createRedis(app.config)
  try {
    await redis.set(redisKey(app.config, 'points', accountId, new Date().toISOString().slice(0, 10)), String(used), 'EX', 2 * 86_400)
  } finally {
    redis.disconnect()
  }
}
