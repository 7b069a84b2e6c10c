-- Day blobs (docs/decisions.md §D-7): each closed UTC day of a stat's five-minute rollups, and of its hourly ones,
-- packed in one bytea, 24 bytes a bucket (timestamptz_send(bucket) || int8send(count) || float8send(sum), in bucket
-- order, only the buckets that exist), exactly as rollupArrays (shared/stats/hourly.ts) packs the rows it reads. A
-- read of whole days takes the day's blob instead of its 288 (or 24) rows: a week of 100 series at 5 minutes is 700
-- values rather than 201,600 rows, each visited and packed (bench:promql's summed rates).
--
-- Never stale: every write of rollups_5m or rollups_1h deletes the blobs of the (stat, day)s it touches, in its own
-- transaction (the triggers below), so one statement sees either a day's blob equal to its rows, or no blob and the
-- rows. The builder (shared/points/rollups.ts, buildRollupDays) packs the days listed in rollup_days_pending once
-- they are over. `size` is the rollup's bucket in seconds: 300 (rollups_5m) or 3600 (rollups_1h).
create table rollup_days (
  stat_id uuid not null references stats (id) on delete cascade,
  size int not null,
  day timestamptz not null,
  buckets bytea not null,
  primary key (stat_id, size, day)
);
-- About 7 kB a day of five minutes: stored out of line uncompressed, so a read copies it rather than decompressing
-- it (a day of hours, 576 bytes, stays in its row).
alter table rollup_days alter column buckets set storage external;

-- The (stat, size, day)s whose rollup rows changed since their blob was built (or that never had one): the
-- builder's list, and the row both sides lock. A write's trigger locks (or adds) the row before it deletes the
-- blob; the builder locks its rows in one statement and reads the rollups in the next, under a later snapshot. So a
-- write either committed before the builder read (its rows are in the blob) or waited for the builder to commit (and
-- then deletes the blob it made). No foreign key: a stat's delete cascades to the rollups, whose delete trigger
-- then takes the stat's rows off this list itself (and lists none of its days); a foreign key would make a
-- retention pass that meets a stat's delete fail on its insert here. The builder also drops rows whose stat is gone.
create table rollup_days_pending (
  stat_id uuid not null,
  size int not null,
  day timestamptz not null,
  primary key (stat_id, size, day)
);
create index rollup_days_pending_day_idx on rollup_days_pending (day);

-- `on conflict do update ... where false` locks an existing row without writing a new version of it (today's row
-- is there after the first write of the day: each later refresh pass only locks it), and returns only the rows it
-- added. A day already listed has no blob (the builder takes the day off the list in the transaction that adds its
-- blob; a write that lists it deletes the blob in its own), so only the newly listed days' blobs are looked for:
-- in a refresh pass, the first of each stat's day. The delete is a statement of its own, under a snapshot taken
-- after the insert's wait on a builder, whose blob it then sees. The trigger's argument is the table's `size`.
create function rollup_days_drop() returns trigger language plpgsql as $$
declare
  listed_size int := tg_argv[0]::int;
  listed_stats uuid[];
  listed_days timestamptz[];
begin
  -- A stat's delete (cascaded here): its days come off the list, and none is listed again.
  if tg_op = 'DELETE' then
    delete from rollup_days_pending p using (select distinct stat_id from changed) c
    where p.stat_id = c.stat_id and not exists (select 1 from stats s where s.id = c.stat_id);
  end if;
  with listed as (
    insert into rollup_days_pending as p (stat_id, size, day)
    select distinct stat_id, listed_size, date_bin('1 day', bucket, timestamptz '2000-01-01 00:00:00+00') from changed
    where tg_op <> 'DELETE' or exists (select 1 from stats s where s.id = changed.stat_id) order by 1, 3
    on conflict (stat_id, size, day) do update set day = excluded.day where false
    returning stat_id, day
  )
  select array_agg(stat_id), array_agg(day) into listed_stats, listed_days from listed;
  if listed_stats is not null then
    delete from rollup_days d using unnest(listed_stats, listed_days) as c(stat_id, day)
    where d.stat_id = c.stat_id and d.size = listed_size and d.day = c.day;
  end if;
  return null;
end
$$;

-- The refresh's upserts fire the insert and the update triggers (their new buckets and their merged ones);
-- retention and a stat's delete fire the delete trigger. No writer changes a row's stat or bucket, so an update's
-- new rows name the days it touched.
create trigger rollup_days_added after insert on rollups_5m referencing new table as changed
  for each statement execute function rollup_days_drop('300');
create trigger rollup_days_merged after update on rollups_5m referencing new table as changed
  for each statement execute function rollup_days_drop('300');
create trigger rollup_days_deleted after delete on rollups_5m referencing old table as changed
  for each statement execute function rollup_days_drop('300');
create trigger rollup_days_added after insert on rollups_1h referencing new table as changed
  for each statement execute function rollup_days_drop('3600');
create trigger rollup_days_merged after update on rollups_1h referencing new table as changed
  for each statement execute function rollup_days_drop('3600');
create trigger rollup_days_deleted after delete on rollups_1h referencing old table as changed
  for each statement execute function rollup_days_drop('3600');

-- Existing installs: every day of rollups (one rollups_1d row per stat and day, a 288th of rollups_5m's) is listed
-- for both sizes, and the builder packs them a batch per refresh pass.
insert into rollup_days_pending (stat_id, size, day)
  select stat_id, size, bucket from rollups_1d cross join (values (300), (3600)) as s(size) order by 1, 2, 3;
