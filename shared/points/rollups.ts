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

/**
 * Packs up to `limit` closed days of five-minute and hourly rollups into their day blobs (sql/0050, rollup_days),
 * from the list the writes of rollups_5m and rollups_1h keep (rollup_days_pending); returns how many listed days it
 * took off the list (packed, or found empty). A day is packed once it ended over an hour ago and none of its points
 * wait in rollup_pending (a blob packed before they are folded would be dropped again by their fold). Nothing on
 * TimescaleDB (no rollups_5m; its rollups_1h is a continuous aggregate).
 *
 * Two statements in one transaction: the first locks the listed rows (skipping those another builder, or a write of
 * the day, holds), the second reads the rollups under a snapshot taken after those locks, packs them and takes the
 * rows off the list. A write of one of those days waits on its listed row until this commits, then deletes the
 * blob made here (the migration says why). Each stat is locked FOR KEY SHARE, skipping one being deleted: its blob
 * would fail the foreign key once the delete commits. A batch of 500 (250 days of both sizes) took 250 to 400 ms
 * in process (90 ms of it the statement's insert): so much is added to a refresh pass while days close or an
 * existing install's history is packed.
 */
export async function buildRollupDays(sql: Sql, limit = 500): Promise<number> {
  if (await usesTimescale(sql)) return 0
  // Most passes find nothing to pack (days close once a day): one statement says so, without a transaction's.
  const due = sql`from rollup_days_pending where day < now() - interval '25 hours'`
  if (!(await sql`select 1 ${due} limit 1`).length) return 0
  return sql.begin(async (tx) => {
    const listed = await tx<{ stat_id: string; size: number; day: number }[]>`
      select stat_id, size, extract(epoch from day)::float8 as day ${due} order by day limit ${limit} for update skip locked`
    if (!listed.length) return 0
    // A day's rows of the listed size's table, by an index scan of its stat and day (joined, the day's bounds were
    // left out of the scan's condition: every day of the stat was read for each day packed).
    const ofDay = (table: postgres.Fragment, size: number) => sql`
      select l.stat_id, l.size, l.day, r.bucket, r.count, r.sum from listed l join live on live.id = l.stat_id
      cross join lateral (select bucket, count, sum from ${table}
        where stat_id = l.stat_id and bucket >= l.day and bucket < l.day + interval '24 hours' offset 0) r
      where l.size = ${size}`
    const [r] = await tx<{ done: number }[]>`
      with listed as (
        select l.stat_id, l.size, to_timestamp(l.day) as day
        from unnest(${listed.map((l) => l.stat_id)}::uuid[], ${listed.map((l) => l.size)}::int[], ${listed.map((l) => l.day)}::float8[])
          as l(stat_id, size, day)
        where not exists (select 1 from rollup_pending p
          where p.stat_id = l.stat_id and p.bucket >= to_timestamp(l.day) and p.bucket < to_timestamp(l.day) + interval '24 hours')
      ),
      live as (select id from stats where id in (select stat_id from listed) for key share skip locked),
      packed as (
        insert into rollup_days (stat_id, size, day, buckets)
        select stat_id, size, day, string_agg(timestamptz_send(bucket) || int8send(count) || float8send(sum), ''::bytea order by bucket)
        from (${ofDay(sql`rollups_5m`, 300)} union all ${ofDay(sql`rollups_1h`, 3600)}) r
        group by 1, 2, 3
        on conflict (stat_id, size, day) do nothing
        returning 1
      ),
      done as (
        delete from rollup_days_pending p using listed l
        where p.stat_id = l.stat_id and p.size = l.size and p.day = l.day
          and (l.stat_id in (select id from live) or not exists (select 1 from stats s where s.id = l.stat_id))
        returning 1
      )
      select (select count(*) from done)::int as done, (select count(*) from packed)::int as packed`
    return r.done
  })
}
