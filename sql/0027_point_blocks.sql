-- Points past their hot days live in per-stat day blocks: one row per stat and UTC
-- day holding that day's points packed, instead of one 133-byte row per point. `points` stays
-- the hot table every write appends to; the compaction job (shared/points/compaction.ts) moves
-- a stat's day of rows into its block in one transaction. Readers of raw points go through
-- stat_points(), which returns hot rows and decoded blocks alike.
--
-- Encoding, chosen by bench:storage: timestamps as whole-second deltas (the first from the day's
-- start), so a regular series is one small number repeated; values, when the whole block
-- round-trips exactly through a power of ten (two-decimal gauges, integer counters), as deltas of
-- the scaled integers, otherwise as raw float8. The arrays go past the TOAST threshold and
-- PostgreSQL's default compression (pglz) packs the repetition. On both storage paths the tables
-- exist; on TimescaleDB the compaction job does nothing (the hypertable compresses itself) and
-- the block table stays empty. New objects only: no lock on existing tables.

create table point_blocks (
  stat_id  uuid        not null,
  day      timestamptz not null,           -- the UTC midnight starting the block's day
  n        integer     not null,
  first_ts timestamptz not null,
  last_ts  timestamptz not null,
  dts      int4[]      not null,           -- seconds since the previous point (the first: since `day`)
  scale    float8,                         -- 10^k when values are in ivals, null when in fvals
  ivals    int8[],                         -- deltas of round(value * scale)
  fvals    float8[],
  primary key (stat_id, day)
);

-- A block's points, in time order. Decoding is two running sums over the arrays; the division
-- by the scale gives back the exact double the writer sent (encode only chose a scale for which
-- round(v * scale) / scale = v held for every value).
create function point_block_decode(p_day timestamptz, p_dts int4[], p_scale float8, p_ivals int8[], p_fvals float8[])
returns table (ts timestamptz, value float8)
language sql immutable parallel safe as $$
  select p_day + (sum(u.dt) over w)::float8 * interval '1 second',
         case when p_scale is null then u.fv else (sum(u.iv) over w)::float8 / p_scale end
  from unnest(p_dts, p_ivals, p_fvals) with ordinality as u(dt, iv, fv, o)
  window w as (order by u.o rows unbounded preceding)
$$;

-- Packs points (any order) into one block's columns. Points must lie in [p_day, p_day + 1 day)
-- on whole seconds (the compaction job only moves such rows).
create function point_block_encode(p_day timestamptz, p_ts timestamptz[], p_vals float8[],
  out n integer, out first_ts timestamptz, out last_ts timestamptz, out dts int4[], out scale float8, out ivals int8[], out fvals float8[])
language sql immutable parallel safe as $$
  with p as (select t, v, o from unnest(p_ts, p_vals) with ordinality as u(t, v, o)),
  k as (
    select (select 10::float8 ^ k from generate_series(0, 6) as k
            where (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ k) / 10::float8 ^ k = v) from p)
            order by k limit 1) as scale
  ),
  q as (
    select p.t, p.v, p.o,
           extract(epoch from p.t - coalesce(lag(p.t) over w, p_day))::int4 as dt,
           round(p.v * k.scale)::int8 - coalesce(lag(round(p.v * k.scale)::int8) over w, 0) as dv
    from p, k window w as (order by p.t, p.o)
  )
  select count(*)::int, min(t), max(t), array_agg(dt order by t, o), (select scale from k),
         case when (select scale from k) is not null then array_agg(dv order by t, o) end,
         case when (select scale from k) is null then array_agg(v order by t, o) end
  from q
$$;

-- Every point of a stat in [p_from, p_to): hot rows and the blocks overlapping the range. A SQL
-- function the planner inlines, so each side uses its own index with the caller's bounds.
create function stat_points(p_stat uuid, p_from timestamptz, p_to timestamptz)
returns table (ts timestamptz, value float8)
language sql stable parallel safe as $$
  select p.ts, p.value from points p where p.stat_id = p_stat and p.ts >= p_from and p.ts < p_to
  union all
  select d.ts, d.value
  from point_blocks b cross join lateral point_block_decode(b.day, b.dts, b.scale, b.ivals, b.fvals) d
  where b.stat_id = p_stat and b.day < p_to and b.day + interval '1 day' > p_from
    and b.last_ts >= p_from and b.first_ts < p_to and d.ts >= p_from and d.ts < p_to
$$;

-- A stat's newest point time in [p_from, p_to): the hot rows' by their index, then the newest block
-- overlapping the range, which is decoded only when the range ends inside it (otherwise its
-- last_ts is the answer). Null when there is none.
create function stat_newest(p_stat uuid, p_from timestamptz, p_to timestamptz)
returns timestamptz
language sql stable parallel safe as $$
  select greatest(h.m, (
    select case when b.last_ts < p_to then b.last_ts else (
      select max(d.ts) from point_block_decode(b.day, b.dts, b.scale, b.ivals, b.fvals) d where d.ts >= p_from and d.ts < p_to) end
    from point_blocks b
    where b.stat_id = p_stat and b.day < p_to and b.first_ts < p_to and b.last_ts >= p_from and b.last_ts > coalesce(h.m, '-infinity')
    order by b.day desc limit 1))
  from (select max(p.ts) as m from points p where p.stat_id = p_stat and p.ts >= p_from and p.ts < p_to) h
$$;
