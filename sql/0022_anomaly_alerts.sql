-- Anomaly alerts (docs/decisions.md §16): condition_type 'anomaly' fires when an anomaly incident opens on
-- the alert's stat and resolves when it closes. Swapping a check constraint scans alerts once under a brief
-- ACCESS EXCLUSIVE lock; the table holds one row per alert (thousands at most).
alter table alerts drop constraint alerts_condition_type_check;
alter table alerts add constraint alerts_condition_type_check
  check (condition_type in ('above', 'below', 'pct_change', 'heartbeat', 'missing_data', 'sustained', 'anomaly'));

-- When the sweep first recorded each incident (an anomaly alert fires for incidents recorded after it was
-- created; `started_at` is the hour, which ended before the sweep that found it). Existing incidents count as
-- recorded now: no alert exists yet that could see them.
alter table anomalies add column opened_at timestamptz not null default now();
