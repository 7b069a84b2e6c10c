-- TimescaleDB storage (docs/decisions.md §D-6 and §D-7); runs only where the
-- extension is available (the runner has created it). Needs TimescaleDB 2.13+.
--
-- Decision: the rollup TABLES of 0002 are replaced by continuous aggregates
-- of the SAME NAMES and columns (rollups_1m, rollups_1h, rollups_1d:
-- stat_id, bucket, count, sum, min, max), with real-time aggregation
-- (materialized_only = false), so a cagg already includes the raw tail above
-- its watermark and chart reads drop the rollup_pending union. 1h is built on
-- 1m and 1d on 1h (hierarchical), so neither rescans raw points.
--   * No refresh policy: the one refresh job (workers/refresh-rollups.ts) calls
--     refresh_continuous_aggregate, finest first, so plain and TimescaleDB
--     share one schedule, once per cluster.
--   * rollup_pending stays and writers still append to it (same statement on
--     both paths): here it is only the refresh job's list of stats that took
--     new points, for rollup_state.refreshed_at. Which time ranges to
--     re-materialize TimescaleDB tracks itself (its invalidation log; deletes
--     included).
--   * Created WITH NO DATA, inside the migration's transaction (the runner
--     sends a file as one simple query, which PostgreSQL runs as one implicit
--     transaction anyway). Until the first refresh, real-time aggregation
--     answers from raw points, so nothing disappears; the first refresh
--     materializes all history.
--
-- Compression after 7 days (segmentby stat_id, orderby ts). Retention drops
-- raw chunks and aggregates older than the longest plan retention (800 days,
-- business); shorter per-plan retention is applied at read and export time.

select create_hypertable('points', by_range('ts', interval '1 day'), migrate_data => true);

alter table points set (
  timescaledb.compress,
  timescaledb.compress_segmentby = 'stat_id',
  timescaledb.compress_orderby = 'ts'
);
select add_compression_policy('points', compress_after => interval '7 days');
select add_retention_policy('points', drop_after => interval '800 days');

drop table rollups_1m, rollups_1h, rollups_1d;

create materialized view rollups_1m with (timescaledb.continuous, timescaledb.materialized_only = false) as
  select stat_id, time_bucket('1 minute', ts) as bucket,
         count(*) as count, sum(value) as sum, min(value) as min, max(value) as max
  from points group by 1, 2
  with no data;

create materialized view rollups_1h with (timescaledb.continuous, timescaledb.materialized_only = false) as
  select stat_id, time_bucket('1 hour', bucket) as bucket,
         sum(count)::bigint as count, sum(sum) as sum, min(min) as min, max(max) as max
  from rollups_1m group by 1, 2
  with no data;

create materialized view rollups_1d with (timescaledb.continuous, timescaledb.materialized_only = false) as
  select stat_id, time_bucket('1 day', bucket) as bucket,
         sum(count)::bigint as count, sum(sum) as sum, min(min) as min, max(max) as max
  from rollups_1h group by 1, 2
  with no data;

select add_retention_policy('rollups_1m', drop_after => interval '800 days');
select add_retention_policy('rollups_1h', drop_after => interval '800 days');
select add_retention_policy('rollups_1d', drop_after => interval '800 days');
