-- Percentiles of gauges (docs/decisions.md §20): mergeable quantile sketches (DDSketch bins, relative
-- accuracy 1 %) per gauge stat and hour, 6 hours and day, beside the rollups whose count/sum/min/max stay in
-- their own columns. Tables of their own, not columns of rollups_1h/1d: on TimescaleDB those are
-- continuous aggregates, which cannot hold a value built in Node, so one layout serves both storage paths.
-- The sketch encoding starts with a version byte (shared/points/sketches.ts).
--
-- Minutes carry no sketch: a minute holds a handful of values, fewer bytes raw than any sketch, so ranges
-- with buckets under an hour read raw points (exact). Why hours and days: see shared/points/sketches.ts.
create table sketches_1h (
  stat_id uuid        not null references stats (id) on delete cascade,
  bucket  timestamptz not null,
  sketch  bytea       not null,
  primary key (stat_id, bucket)
);

create table sketches_1d (like sketches_1h including all);
alter table sketches_1d add foreign key (stat_id) references stats (id) on delete cascade;
-- 6 hours: the 30d chart's bucket, 120 sketches to merge instead of 720 hours.
create table sketches_6h (like sketches_1h including all);
alter table sketches_6h add foreign key (stat_id) references stats (id) on delete cascade;

-- Hours of gauges that took points since their sketch was built: the rollup refresh marks them (in the
-- statement that claims rollup_pending, so no point goes unmarked) and rebuilds the complete ones from
-- the points table. Reads treat a marked hour as not sketched yet and read its raw points.
create table sketch_dirty (
  stat_id uuid        not null references stats (id) on delete cascade,
  hour    timestamptz not null,
  primary key (stat_id, hour)
);
-- The refresh looks for complete hours among the marks every 2 s; the current hour's marks of every active
-- gauge wait there until it ends.
create index sketch_dirty_hour_idx on sketch_dirty (hour);
