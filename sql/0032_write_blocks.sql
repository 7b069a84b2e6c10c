-- Writes that store fewer rows: a persist job holding many points of one stat
-- for one UTC day past the hot days (a backfill, a client sending history) writes them as one block
-- of that day, encoded by the worker in sql/0027's format (shared/points/blocks.ts), instead of a
-- row per point that the next compaction would only move.
-- A day may then hold several blocks: `seq` 0 is the compacted block, a write's block takes the
-- next number of point_write_seq. The compaction merges a day's write blocks and hot rows into
-- its block 0 (the partial index finds the days that have write blocks).
--
-- stat_points() needs nothing: it already reads every block overlapping the range. stat_newest()
-- is redefined below to take every block of the newest day. The primary key's index is rebuilt
-- under the migration's lock; the table holds a row per stat and day, so it is small.

alter table point_blocks add column seq bigint not null default 0;
alter table point_blocks drop constraint point_blocks_pkey, add primary key (stat_id, day, seq);
create sequence point_write_seq;
create index point_blocks_writes on point_blocks (day, stat_id) where seq > 0;

-- A stat's newest point time in [p_from, p_to): the hot rows' by their index, then the blocks of the
-- newest day that has one overlapping the range, each decoded only when the range ends inside it
-- (otherwise its last_ts is its newest). Null when there is none.
create or replace function stat_newest(p_stat uuid, p_from timestamptz, p_to timestamptz)
returns timestamptz
language sql stable parallel safe as $$
  select greatest(h.m, (
    select max(case when b.last_ts < p_to then b.last_ts else (
      select max(d.ts) from point_block_decode(b.day, b.dts, b.scale, b.ivals, b.fvals) d where d.ts >= p_from and d.ts < p_to) end)
    from point_blocks b
    where b.stat_id = p_stat and b.first_ts < p_to and b.last_ts >= p_from and b.last_ts > coalesce(h.m, '-infinity')
      and b.day = (
        select n.day from point_blocks n
        where n.stat_id = p_stat and n.day < p_to and n.first_ts < p_to and n.last_ts >= p_from and n.last_ts > coalesce(h.m, '-infinity')
        order by n.day desc limit 1)))
  from (select max(p.ts) as m from points p where p.stat_id = p_stat and p.ts >= p_from and p.ts < p_to) h
$$;
