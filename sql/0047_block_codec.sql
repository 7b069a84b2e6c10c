-- Decoding and encoding blocks for less CPU, the same blocks and points (docs/decisions.md §27). A new aggregate and
-- replaced functions only: no lock on a table.
--
-- Decoding: the value deltas' running sum was sum(int8), whose result is numeric, turned into float8 through its
-- text for every point; a day block read by stat_points (an exact percentile, the alert evaluator) cost 3x the
-- same points as rows (bench:hotwindow). point_delta_sum keeps the sum in int8: the encoders scale only values
-- under 1e12 by at most 10^6, so no scaled value (a partial sum) or delta leaves int8's range, and int8 to float8
-- rounds to nearest as numeric's text did: the same doubles.
create aggregate point_delta_sum(int8) (sfunc = int8pl, stype = int8, initcond = '0', parallel = safe);

create or replace function point_block_decode(p_day timestamptz, p_dts int4[], p_scale float8, p_ivals int8[], p_fvals float8[])
returns table (ts timestamptz, value float8)
language sql immutable parallel safe as $$
  select p_day + (sum(u.dt) over w)::float8 * interval '1 second',
         case when p_scale is null then u.fv else (point_delta_sum(u.iv) over w)::float8 / p_scale end
  from unnest(p_dts, p_ivals, p_fvals) with ordinality as u(dt, iv, fv, o)
  window w as (order by u.o rows unbounded preceding)
$$;

-- Encoding, the same blocks for less (bench:hotwindow: half of an encode was finding the scale). The scale was
-- the first k of generate_series(0, 6) whose scan of the points found them all round-tripping, but the sort
-- before `limit 1` made it scan the points once for every k; a CASE scans them for k = 0, 1, ... and stops at the
-- first that fits (3 scans for two-decimal gauges, 1 for counters). The time deltas through date_part's float8
-- rather than extract's numeric (the same whole seconds), and only the one of ivals and fvals the block keeps
-- is aggregated (the other is null, as before). And it returns its one row as a table: a set-returning SQL
-- function is inlined into the statement that calls it in FROM (every caller does), where a function returning a
-- record ran its own executor per call, once per stat of a pass's stretch (a day's encode 9.8 -> 5.0 ms in process).
drop function point_block_encode(timestamptz, timestamptz[], float8[]);
create function point_block_encode(p_day timestamptz, p_ts timestamptz[], p_vals float8[])
returns table (n integer, first_ts timestamptz, last_ts timestamptz, dts int4[], scale float8, ivals int8[], fvals float8[])
language sql immutable parallel safe as $$
  with p as (select t, v, o from unnest(p_ts, p_vals) with ordinality as u(t, v, o)),
  k as (
    select case
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 0) / 10::float8 ^ 0 = v) from p) then 10::float8 ^ 0
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 1) / 10::float8 ^ 1 = v) from p) then 10::float8 ^ 1
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 2) / 10::float8 ^ 2 = v) from p) then 10::float8 ^ 2
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 3) / 10::float8 ^ 3 = v) from p) then 10::float8 ^ 3
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 4) / 10::float8 ^ 4 = v) from p) then 10::float8 ^ 4
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 5) / 10::float8 ^ 5 = v) from p) then 10::float8 ^ 5
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 6) / 10::float8 ^ 6 = v) from p) then 10::float8 ^ 6
    end as scale
  ),
  q as (
    select p.t, p.v, p.o, k.scale,
           date_part('epoch', p.t - coalesce(lag(p.t) over w, p_day))::int4 as dt,
           round(p.v * k.scale)::int8 - coalesce(lag(round(p.v * k.scale)::int8) over w, 0) as dv
    from p, k window w as (order by p.t, p.o)
  )
  select count(*)::int, min(t), max(t), array_agg(dt order by t, o), (select scale from k),
         array_agg(dv order by t, o) filter (where scale is not null),
         array_agg(v order by t, o) filter (where scale is null)
  from q
$$;
