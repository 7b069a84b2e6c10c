// Rollups (docs/decisions.md §D-7): per-stat 1 minute, 1 hour and 1 day
// buckets of count, sum, min and max. Writers append per-minute aggregates to
// rollup_pending; this refresh claims them with DELETE ... RETURNING (only
// committed rows are seen, and SKIP LOCKED lets two refreshers split the work)
// and folds them into the three rollup tables in one statement. The 5 minute
// rollup (plain path only, sql/0048) follows rollups_1m by its triggers.
//
// TimescaleDB (sql/0003_timescale.timescale.sql): rollups_* are real-time
// continuous aggregates. The refresh materializes every range TimescaleDB
// logged as changed (its invalidation log, deletes included; the open start
// re-materializes only those ranges) up to now() (only complete buckets; the
// newest come from real-time aggregation), finest first because 1h is built
// on 1m and 1d on 1h. It then claims rollup_pending only to learn which stats
// took new points and records their refresh time. Points committed while the
// refresh ran may be claimed here and materialized by the next run.
//
// On both paths the claim statement also runs the caller's marks (ClaimMark): what else must follow the
// points it folded (the anomaly sweep's replays, stale quantile sketches) is recorded with the claim, and
// the caller (workers/refresh-rollups.ts) names those steps.
import type postgres from 'postgres'
import type { Db, Sql } from '../db.js'
import { usesTimescale } from './storage.js'

/**
 * A CTE that records, in the claim's own statement, something the points folded by a refresh require: it
 * reads `claimed` (stat_id, bucket: the rollup_pending rows taken). One statement with the claim, so a
 * claimed point is never folded without its marks.
 */
export type ClaimMark = (sql: Db) => postgres.Fragment

/**
 * The pending rows a refresh may claim: unlocked ones (another refresher has the rest), of stats not being deleted.
 * The stat is locked FOR KEY SHARE here, before any rollup row: a refresh that first claimed a deleted stat's pending
 * rows and then waited on the stat (the rollups' foreign key) would deadlock with the delete, which cascades from the
 * stat to those same rows. Skipped rows go with their stat, or to the next refresh if the delete rolls back.
 */
function claimable(sql: Sql, limit: number) {
  return sql`select p.ctid from rollup_pending p join stats s on s.id = p.stat_id limit ${limit}
    for update of p skip locked for key share of s skip locked`
}

/** Folds up to `limit` pending aggregates into the rollups (or materializes TimescaleDB's), running `marks` with the claim. */
export async function foldRollups(sql: Sql, limit: number, marks: readonly ClaimMark[]): Promise<{ rows: number; stats: number }> {
  const extra = marks.reduce<postgres.Fragment>((acc, mark) => sql`${acc}, ${mark(sql)}`, sql``)
  return (await usesTimescale(sql)) ? refreshAggregates(sql, limit, extra) : refreshTables(sql, limit, extra)
}

async function refreshTables(sql: Sql, limit: number, marks: postgres.Fragment): Promise<{ rows: number; stats: number }> {
  // Folding an aggregate into a bucket that already holds one: the same for every resolution.
  const merge = sql`on conflict (stat_id, bucket) do update set count = r.count + excluded.count, sum = r.sum + excluded.sum,
    min = least(r.min, excluded.min), max = greatest(r.max, excluded.max)`
  const [r] = await sql<{ rows: number; stats: number }[]>`
    with claimed as (
      delete from rollup_pending where ctid in (${claimable(sql, limit)})
      returning stat_id, bucket, count, sum, min, max
    ),
    m as (
      select stat_id, bucket, sum(count) as count, sum(sum) as sum, min(min) as min, max(max) as max from claimed group by 1, 2
    ),
    up_1m as (
      insert into rollups_1m as r (stat_id, bucket, count, sum, min, max) select * from m order by 1, 2
      ${merge}
      returning 1
    ),
    up_1h as (
      insert into rollups_1h as r (stat_id, bucket, count, sum, min, max)
      select stat_id, date_trunc('hour', bucket, 'UTC'), sum(count), sum(sum), min(min), max(max) from m group by 1, 2 order by 1, 2
      ${merge}
      returning 1
    ),
    up_1d as (
      insert into rollups_1d as r (stat_id, bucket, count, sum, min, max)
      select stat_id, date_trunc('day', bucket, 'UTC'), sum(count), sum(sum), min(min), max(max) from m group by 1, 2 order by 1, 2
      ${merge}
      returning 1
    ),
    state as (
      insert into rollup_state as s (stat_id, refreshed_at) select distinct stat_id, now() from m
      on conflict (stat_id) do update set refreshed_at = excluded.refreshed_at
      returning 1
    )
    ${marks}
    select (select count(*) from claimed)::int as rows,
           (select count(*) from state)::int as stats,
           (select count(*) from up_1m) + (select count(*) from up_1h) + (select count(*) from up_1d) as upserts`
  return { rows: r.rows, stats: r.stats }
}

async function refreshAggregates(sql: Sql, limit: number, marks: postgres.Fragment): Promise<{ rows: number; stats: number }> {
  // CALL cannot run in a transaction block: three statements, each on its own.
  await sql`call refresh_continuous_aggregate('rollups_1m', null, now())`
  await sql`call refresh_continuous_aggregate('rollups_1h', null, now())`
  await sql`call refresh_continuous_aggregate('rollups_1d', null, now())`
  const [r] = await sql<{ rows: number; stats: number }[]>`
    with claimed as (
      delete from rollup_pending where ctid in (${claimable(sql, limit)})
      returning stat_id, bucket
    ),
    state as (
      insert into rollup_state as s (stat_id, refreshed_at) select distinct stat_id, now() from claimed
      on conflict (stat_id) do update set refreshed_at = excluded.refreshed_at
      returning 1
    )
    ${marks}
    select (select count(*) from claimed)::int as rows, (select count(*) from state)::int as stats`
  return { rows: r.rows, stats: r.stats }
}
