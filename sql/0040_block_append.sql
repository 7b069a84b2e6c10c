-- Merging a day's blocks by appending, and small blocks stored compressed (docs/decisions.md §27).
--
-- The compaction merges a day's small blocks (its 10-minute stretches, write blocks) into the day's block 0.
-- Decoding every block and encoding the day again cost each merge a window function per point of the whole
-- day so far. Blocks that follow one another in time with the same scale need neither: the encoding is
-- deltas, so block B goes after block A by changing B's first time delta (from the day's start to from A's
-- last time) and its first value delta (from 0 to from A's last scaled value); the arrays are then concatenated.
-- The result is the very block point_block_encode gives for all their points: the smallest scale through which
-- each part's values round-trip is the same for their union, and the deltas are those of the points in order.
-- A merge then costs a sum over the day block's value deltas and the copy of its arrays, not a decode and an
-- encode. Parts that overlap in time (a late point, a backfill inside the day) or differ in scale return null,
-- and the caller decodes and encodes them all as before.
--
-- Storage: a small block (a stretch of 60 points) is a row of a few hundred bytes, under the 2 KB at which
-- PostgreSQL starts compressing, so it stayed raw at 12 bytes a point. toast_tuple_target = 128 compresses
-- any row past 128 bytes; the arrays are stored MAIN, compressed in the row and moved out to TOAST only when
-- a row would not fit a page (a day block), so a small block is not a TOAST pointer and a TOAST row of its
-- own. Both settings apply to rows written from now on; no rewrite, a brief lock on a small table.
alter table point_blocks set (toast_tuple_target = 128);
alter table point_blocks alter column dts set storage main, alter column ivals set storage main, alter column fvals set storage main;

-- Appends every other block of (p_stat, p_day) to its first in time (block 0 when there is one), writes the
-- result as block 0 and deletes the others; returns how many points the blocks with seq > 0 held, or null
-- (nothing written) when they cannot be appended: a block starting at or before the previous one's last
-- time, or scales that differ. The caller holds the day's block lock (shared/points/compaction.ts blockLock).
create function point_blocks_append(p_stat uuid, p_day timestamptz) returns integer
language plpgsql as $$
declare
  r record;
  k integer := 0;
  merged integer := 0;
  small bigint[] := '{}';
  base_seq bigint;
  n_all integer;
  first_at timestamptz;
  last_at timestamptz;
  sc float8;
  last_scaled int8;
  d_head int4[];
  i_head int8[];
  f_head float8[];
  d_tail int4[] := '{}';
  i_tail int8[] := '{}';
  f_tail float8[] := '{}';
  d int4[];
  iv int8[];
begin
  for r in
    select seq, n, first_ts, last_ts, dts, scale, ivals, fvals from point_blocks
    where stat_id = p_stat and day = p_day order by seq <> 0, first_ts, seq
  loop
    k := k + 1;
    if r.seq <> 0 then
      small := small || r.seq;
      merged := merged + r.n;
    end if;
    if k = 1 then
      base_seq := r.seq;
      n_all := r.n;
      first_at := r.first_ts;
      sc := r.scale;
      d_head := r.dts;
      i_head := r.ivals;
      f_head := r.fvals;
    else
      if r.first_ts <= last_at or r.scale is distinct from sc then
        return null;
      end if;
      n_all := n_all + r.n;
      d := r.dts;
      d[1] := d[1] - extract(epoch from last_at - p_day)::int4;
      d_tail := d_tail || d;
      if sc is null then
        f_tail := f_tail || r.fvals;
      else
        -- The previous part's last scaled value: the sum of its deltas (its first is from 0).
        if last_scaled is null then
          select sum(x) into last_scaled from unnest(i_head) as u(x);
        end if;
        iv := r.ivals;
        iv[1] := iv[1] - last_scaled;
        i_tail := i_tail || iv;
        select sum(x) into last_scaled from unnest(r.ivals) as u(x);
      end if;
    end if;
    last_at := r.last_ts;
  end loop;
  if k = 0 or (k = 1 and base_seq = 0) then
    return 0;
  end if;
  if k = 1 then
    -- One small block and no block 0: it becomes block 0 as it is (its compressed arrays are kept).
    update point_blocks set seq = 0 where stat_id = p_stat and day = p_day and seq = base_seq;
    return merged;
  end if;
  delete from point_blocks where stat_id = p_stat and day = p_day and seq = any(small);
  insert into point_blocks (stat_id, day, seq, n, first_ts, last_ts, dts, scale, ivals, fvals)
  values (p_stat, p_day, 0, n_all, first_at, last_at, d_head || d_tail, sc,
          case when sc is null then null else i_head || i_tail end,
          case when sc is null then f_head || f_tail end)
  on conflict (stat_id, day, seq) do update set n = excluded.n, first_ts = excluded.first_ts, last_ts = excluded.last_ts,
    dts = excluded.dts, scale = excluded.scale, ivals = excluded.ivals, fvals = excluded.fvals;
  return merged;
end
$$;
