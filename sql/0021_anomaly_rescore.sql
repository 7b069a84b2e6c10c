-- History written with a past t is scored (docs/decisions.md §16): the rollup refresh records, per stat,
-- the earliest hour it folded points into that the anomaly sweep had already scored (or any hour, for a stat
-- the sweep has never scored), and the next sweep replays the stat from there, so the chart's flagged hours
-- and the incident list agree. One row per stat at most; the sweep deletes it once replayed. New table only.
create table anomaly_rescore (
  stat_id   uuid primary key references stats (id) on delete cascade,
  from_hour timestamptz not null
);
