// Rollups (DESIGN.md decision 7): per-stat 1 minute, 1 hour and 1 day
// buckets of count, sum, min and max. Writers append per-minute aggregates to
// rollup_pending; this refresh claims them with DELETE ... RETURNING (only
// committed rows are seen, and SKIP LOCKED lets two refreshers split the work)
// and folds them into the three rollup tables in one statement.
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
// On both paths the claim also marks the gauge hours it touched (sketch_dirty), and the complete marked
// hours get their quantile sketches rebuilt from the points table (shared/points/sketches.ts).
import type { Sql } from '../db.js'
import { DETECTING_PLANS } from '../plans.js'
import { markDirty, refreshSketches } from './sketches.js'
import { usesTimescale } from './storage.js'

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

/**
 * The CTE that marks stats for a replay by the anomaly sweep (sql/0021_anomaly_rescore.sql): points folded into an
 * hour the sweep already scored (a backfill, an import, a late point), or into any hour of a stat it never scored;
 * stats of plans that detect anomalies only.
 * Waits on a marker the sweep holds (it is replaying that stat): the marker written after the sweep commits is
 * then the next sweep's, so no folded hour goes unscored.
 */
function rescore(sql: Sql) {
  return sql`rescore as (
      insert into anomaly_rescore as r (stat_id, from_hour)
      select c.stat_id, date_trunc('hour', min(c.bucket), 'UTC') from claimed c
      join stats s on s.id = c.stat_id
      join accounts a on a.id = s.account_id and a.plan = any(${DETECTING_PLANS})
      left join anomaly_state st on st.stat_id = c.stat_id
      group by c.stat_id, st.last_hour
      having st.last_hour is null or date_trunc('hour', min(c.bucket), 'UTC') <= st.last_hour
      order by 1
      on conflict (stat_id) do update set from_hour = least(r.from_hour, excluded.from_hour)
      returning 1
    )`
}

export async function refreshRollups(sql: Sql, limit = 200_000): Promise<{ rows: number; stats: number }> {
  const r = (await usesTimescale(sql)) ? await refreshAggregates(sql, limit) : await refreshTables(sql, limit)
  await refreshSketches(sql)
  return r
}

async function refreshTables(sql: Sql, limit: number): Promise<{ rows: number; stats: number }> {
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
    ),
    ${rescore(sql)},
    ${markDirty(sql)}
    select (select count(*) from claimed)::int as rows,
           (select count(*) from state)::int as stats,
           (select count(*) from up_1m) + (select count(*) from up_1h) + (select count(*) from up_1d) as upserts`
  return { rows: r.rows, stats: r.stats }
}

async function refreshAggregates(sql: Sql, limit: number): Promise<{ rows: number; stats: number }> {
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
    ),
    ${rescore(sql)},
    ${markDirty(sql)}
    select (select count(*) from claimed)::int as rows, (select count(*) from state)::int as stats`
  return { rows: r.rows, stats: r.stats }
}
