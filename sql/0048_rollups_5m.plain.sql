-- Five-minute rollups (docs/decisions.md §D-7, §25): the same columns as rollups_1m, each row the minute rows of
-- its five minutes added up. Reads of buckets that are whole 5 minutes under an hour (PromQL's 5, 10, 15 and 30
-- minute steps over a week, rate windows at those steps) read a fifth of the rows they read from rollups_1m
-- (bench:promql: a week of 100 series at 5 minutes was 504,000 minute rows, each visited, packed and sent).
--
-- Kept from rollups_1m by triggers rather than by the refresh's statement, so that every write of a minute row is
-- in it, by the refresh of this release or of the one before it (a rolling release runs both for a while). Each
-- change is added in as the refresh adds its own to rollups_1h (count and sum added, min and max merged), under
-- the row's lock: two refreshes at once each add theirs. A merged minute adds its new values less its old ones
-- (the refresh only ever adds to a minute; new - old of a double is what the minute's own addition rounded to).
-- Deletes follow their own rule: retention deletes whole 5-minute buckets (shared/points/retention.ts), a stat's
-- delete cascades.
create table rollups_5m (like rollups_1m including all);
alter table rollups_5m add foreign key (stat_id) references stats (id) on delete cascade;

create function rollups_5m_add() returns trigger language plpgsql as $$
begin
  insert into rollups_5m as r (stat_id, bucket, count, sum, min, max)
  select stat_id, date_bin('5 minutes', bucket, timestamptz '2000-01-01 00:00:00+00'), sum(count), sum(sum), min(min), max(max)
  from added group by 1, 2 order by 1, 2
  on conflict (stat_id, bucket) do update set count = r.count + excluded.count, sum = r.sum + excluded.sum,
    min = least(r.min, excluded.min), max = greatest(r.max, excluded.max);
  return null;
end
$$;

create function rollups_5m_merge() returns trigger language plpgsql as $$
begin
  insert into rollups_5m as r (stat_id, bucket, count, sum, min, max)
  select n.stat_id, date_bin('5 minutes', n.bucket, timestamptz '2000-01-01 00:00:00+00'), sum(n.count - o.count), sum(n.sum - o.sum),
    min(n.min), max(n.max)
  from merged n join unmerged o using (stat_id, bucket) group by 1, 2 order by 1, 2
  on conflict (stat_id, bucket) do update set count = r.count + excluded.count, sum = r.sum + excluded.sum,
    min = least(r.min, excluded.min), max = greatest(r.max, excluded.max);
  return null;
end
$$;

-- The refresh's upsert (insert ... on conflict do update) fires both: its new minutes and its merged ones.
create trigger rollups_5m_add after insert on rollups_1m referencing new table as added
  for each statement execute function rollups_5m_add();
create trigger rollups_5m_merge after update on rollups_1m referencing old table as unmerged new table as merged
  for each statement execute function rollups_5m_merge();

-- The minutes folded before this migration (the triggers' lock on rollups_1m holds the refresh off meanwhile).
insert into rollups_5m (stat_id, bucket, count, sum, min, max)
  select stat_id, date_bin('5 minutes', bucket, timestamptz '2000-01-01 00:00:00+00'), sum(count), sum(sum), min(min), max(max)
  from rollups_1m group by 1, 2 order by 1, 2;
