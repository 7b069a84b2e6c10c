-- Alerts on a percentile of a gauge (docs/decisions.md §20): `aggregation` is what an alert
-- compares with its threshold. avg is the value of the last minute, as every alert did before (counters are
-- summed whatever it says); p50/p90/p95/p99 are the nearest-rank percentile of the gauge's points over the
-- last window_minutes, read like a chart bucket of that length (shared/stats/percentiles.ts). Percentiles
-- apply to the conditions on a stat's value only. A constant default: adding the column rewrites nothing.
alter table alerts add column aggregation text not null default 'avg'
  check (aggregation in ('avg', 'p50', 'p90', 'p95', 'p99'));
alter table alerts add constraint alerts_aggregation_condition_check
  check (aggregation = 'avg' or condition_type in ('above', 'below', 'sustained'));
