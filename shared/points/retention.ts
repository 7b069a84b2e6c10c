// Retention: points older than the account's plan keeps are deleted, per plan
// (plans differ, so no single time cut fits every account). Reads clamp to
// the same limit (shared/stats/ranges.ts clampToRetention, export's window),
// so what a reader sees does not depend on when this job last ran.
// Compacted points go a day block at a time (sql/0027): a day of an account's
// points is one row delete per stat, and only the block straddling the cutoff
// is rewritten.
import type { Sql } from '../db.js'
import { PLANS } from '../plans.js'
import { blockLock } from './compaction.js'
import { usesTimescale } from './storage.js'

const DAY_MS = 86_400_000
const ROLLUPS = [
  ['rollups_1m', 60],
  ['rollups_5m', 300],
  ['rollups_1h', 3_600],
  ['rollups_1d', 86_400],
] as const
const SKETCHES = [
  ['sketches_1m', 60],
  ['sketches_1h', 3_600],
  ['sketches_6h', 21_600],
  ['sketches_1d', 86_400],
] as const

export interface RetentionResult {
  points: number
  rollups: number
}

export async function enforceRetention(sql: Sql, now: Date): Promise<RetentionResult> {
  const timescale = await usesTimescale(sql)
  const out: RetentionResult = { points: 0, rollups: 0 }
  for (const plan of Object.values(PLANS)) {
    const cutoff = new Date(now.getTime() - plan.retentionDays * DAY_MS)
    // By (stat_id, ts), the points index; run hourly, each pass deletes about an hour's worth per stat.
    const ofPlan = sql`select s.id from stats s join accounts a on a.id = s.account_id where a.plan = ${plan.name}`
    const [points] = await sql<{ n: number }[]>`
      with d as (delete from points where ts < ${cutoff} and stat_id in (${ofPlan}) returning 1) select count(*)::int as n from d`
    out.points += points.n
    out.points += await expireBlocks(sql, cutoff, plan.name)
    // TimescaleDB's rollups are continuous aggregates: deleting the points invalidates them and the next refresh
    // re-materializes them; whole chunks past the longest plan go by its retention policy (sql/0003).
    // Sketches are tables on both paths (sql/0023): the same whole-bucket rule.
    for (const [table, seconds] of timescale ? SKETCHES : [...ROLLUPS, ...SKETCHES]) {
      // Only buckets wholly before the cutoff: a straddling bucket still holds points inside retention.
      const [rows] = await sql<{ n: number }[]>`
        with d as (delete from ${sql(table)} where bucket < ${new Date(cutoff.getTime() - seconds * 1000)} and stat_id in (${ofPlan}) returning 1)
        select count(*)::int as n from d`
      out.rollups += rows.n
    }
  }
  return out
}

/**
 * A straddling block is rewritten once it holds this much expired time, not on every hourly run: each
 * rewrite decodes and encodes the whole day, and its expired points are already out of every read
 * (reads clamp to the same retention). So a block is rewritten about three times before it goes whole.
 */
const REWRITE_AFTER_MS = 6 * 3_600_000

/**
 * Day blocks past the cutoff (compacted and write blocks alike, sql/0032): those wholly before it are
 * deleted in one statement; each one straddling it (with at least REWRITE_AFTER_MS expired) is rewritten without its expired points, under the block's lock (a compaction
 * merging a backfill into the same block would otherwise write back what this removes).
 * Returns how many points went.
 */
async function expireBlocks(sql: Sql, cutoff: Date, planName: string): Promise<number> {
  const ofPlan = sql`select s.id from stats s join accounts a on a.id = s.account_id where a.plan = ${planName}`
  const [whole] = await sql<{ n: number }[]>`
    with d as (delete from point_blocks where last_ts < ${cutoff} and stat_id in (${ofPlan}) returning n)
    select coalesce(sum(n), 0)::int as n from d`
  let n = whole.n
  const straddling = await sql<{ stat_id: string; day: Date; seq: string }[]>`
    select stat_id, day, seq from point_blocks
    where first_ts < ${new Date(cutoff.getTime() - REWRITE_AFTER_MS)} and last_ts >= ${cutoff} and stat_id in (${ofPlan})`
  for (const b of straddling) {
    n += (await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(26, hashtext(${blockLock(b.stat_id, b.day)}))`
      const [r] = await tx<{ removed: number }[]>`
        with old as (select n from point_blocks where stat_id = ${b.stat_id} and day = ${b.day} and seq = ${b.seq} and first_ts < ${cutoff} and last_ts >= ${cutoff}),
        kept as (
          select e.* from point_blocks b
          cross join lateral (
            select array_agg(d.ts) as ts, array_agg(d.value) as value
            from point_block_decode(b.day, b.dts, b.scale, b.ivals, b.fvals) d where d.ts >= ${cutoff}
          ) k
          cross join lateral point_block_encode(b.day, k.ts, k.value) e
          where b.stat_id = ${b.stat_id} and b.day = ${b.day} and b.seq = ${b.seq} and b.first_ts < ${cutoff} and b.last_ts >= ${cutoff}
        ),
        up as (
          update point_blocks set n = kept.n, first_ts = kept.first_ts, last_ts = kept.last_ts, dts = kept.dts,
            scale = kept.scale, ivals = kept.ivals, fvals = kept.fvals
          from kept where stat_id = ${b.stat_id} and day = ${b.day} and seq = ${b.seq}
          returning point_blocks.n
        )
        select coalesce((select sum(n) from old), 0)::int - coalesce((select sum(n) from up), 0)::int as removed`
      return r.removed
    })) as number
  }
  return n
}
