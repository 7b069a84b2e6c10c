// Percentiles of a gauge per chart bucket (docs/decisions.md §20), nearest-rank, within 1 % of exact.
// Buckets under an hour (ranges 1h, 6h, 24h) merge the minute sketches of dense hours (sql/0034: an hour of 3,600
// points or more) and are computed exactly from the raw points (percentile_disc is nearest-rank) in every other
// hour: sparse hours, the current hour, hours marked for a rebuild (10 percentiles over 24 h of
// a 4M-point gauge sorted 4M rows, 2.4 s a read). Buckets of whole hours merge sketches (shared/points/sketches.ts): day sketches for
// 90d and 180d, 6-hour sketches for 30d, hour sketches otherwise (7d), and the raw points, binned the way a sketch
// files them, of every hour with no up-to-date sketch: the current hour, hours whose points are still in
// rollup_pending, and hours marked for a rebuild. So a point is in the percentiles as soon as it is
// persisted, as it is in the averages, and a refresh changes no answer beyond the sketch's 1 %.
import type postgres from 'postgres'
import type { Db } from '../db.js'
import { invalid } from '../errors.js'
import { binOf, COARSE_TIERS, Sketch } from '../points/sketches.js'
import { idsOf, readBuckets, type Bucket, type SeriesIds } from './read.js'
import type { Kind } from './repo.js'
import type { Window } from './ranges.js'

const HOUR = 3_600_000

/** A requested percentile: its response key (p95, p99.9) and its fraction. */
export interface Percentile {
  key: string
  q: number
}

/** `percentiles=50,95,99` (already checked by the query schema) as keys and fractions, each once. */
export function parsePercentiles(raw: string, kind: Kind): Percentile[] {
  if (kind !== 'gauge')
    throw invalid('percentiles_on_counter', "invalid percentiles: only gauges have percentiles (a counter's bucket is a sum)")
  const seen = new Map<string, Percentile>()
  for (const part of raw.split(',')) {
    const p = Number(part)
    // The double nearest the decimal fraction: 99.9 / 100 is 0.9990000000000001, and percentile_disc's
    // ceil(q·n) then took rank 1,000 of 1,000 for p99.9 rather than 999 (the max for a nearest-rank p99.9).
    seen.set(`p${p}`, { key: `p${p}`, q: Number(`${p}e-2`) })
  }
  return [...seen.values()]
}

/** Each bucket's percentiles, in the order asked, by bucket start (Unix seconds). */
export async function readPercentiles(sql: Db, statId: SeriesIds, w: Window, ps: Percentile[]): Promise<Map<number, number[]>> {
  const b = w.bucketSeconds
  if (b % 3_600 !== 0 && 3_600 % b === 0 && b % 60 === 0) return minutePercentiles(sql, statId, w, ps)
  return bucketPercentiles(sql, statId, w, ps, 0, b % 3_600 !== 0)
}

/**
 * Chart buckets under an hour that divide it (1, 5, 15 minutes): a bucket lies in one hour, so it is answered
 * from that hour's minute sketches when the hour has them and is clean (complete, not pending a refresh, not
 * marked for a rebuild), else exactly from its raw points. Two round trips: which hours have sketches, then the
 * points of the others (the current hour at least).
 */
async function minutePercentiles(sql: Db, statId: SeriesIds, w: Window, ps: Percentile[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>()
  if (w.from >= w.to) return out
  const from = w.from.getTime()
  const to = w.to.getTime()
  const firstHour = new Date(Math.floor(from / HOUR) * HOUR)
  const hourEdge = new Date(Math.floor(to / HOUR) * HOUR)
  // The sketches and the stale hours in one statement: one snapshot (staleHours says why).
  const rows =
    hourEdge > w.from
      ? await sql<SketchRow[]>`
        ${staleHours(sql, statId, firstHour, hourEdge)}
        union all
        select 'sketch', bucket, sketch from sketches_1m where stat_id = any(${idsOf(statId)}::uuid[]) and bucket >= ${w.from} and bucket < ${hourEdge}`
      : []
  const minutes = ofKind(rows, 'sketch')
  const stale = new Set(ofKind(rows, 'stale').map((r) => r.bucket.getTime()))
  const hourOf = (ms: number) => Math.floor(ms / HOUR) * HOUR
  const covered = new Set(minutes.map((m) => hourOf(m.bucket.getTime())).filter((h) => !stale.has(h)))
  // The window less the covered hours, as [from, to) ranges of raw points.
  const ranges: Array<[number, number]> = []
  let at = from
  for (const h of [...covered].sort((a, b) => a - b)) {
    if (at < Math.max(h, from)) ranges.push([at, Math.max(h, from)])
    at = h + HOUR
  }
  if (at < to) ranges.push([at, to])
  const b = w.bucketSeconds
  const exact = ranges.length
    ? await sql<{ t: string; v: number[] }[]>`
        select (floor(date_part('epoch', ts) / ${b}::float8) * ${b}::float8)::float8 as t,
               percentile_disc(${ps.map((p) => p.q)}::float8[]) within group (order by value) as v
        from (${pointsIn(sql, statId, ranges, sql`value`)}) x group by 1`
    : []
  for (const r of exact) out.set(Number(r.t), r.v.map(Number))
  const sketches = new Map<number, Sketch>()
  for (const m of minutes) {
    if (!covered.has(hourOf(m.bucket.getTime()))) continue
    const t = Math.floor(m.bucket.getTime() / 1000 / b) * b
    let s = sketches.get(t)
    if (!s) sketches.set(t, (s = new Sketch()))
    s.mergeEncoded(m.sketch)
  }
  for (const [t, s] of sketches)
    out.set(
      t,
      ps.map((p) => s.quantile(p.q)!),
    )
  return out
}

/**
 * The percentiles of all of a gauge's points in [from, to) (any bounds, to the millisecond), in the order asked;
 * null when the span holds no point. The reader of alerts on a percentile, the threshold helper and the question
 * box, the same as a chart bucket of the span's length: a span under an hour is
 * exact (percentile_disc, nearest-rank); an hour or longer merges the hour sketches of the clean whole hours inside it
 * with the binned raw points of its partial first and last hours and of every unsketched hour, within 1 %, and is
 * clamped to the exact min and max of the hours it touches (so a stat that holds one value reads exactly that
 * value, not its bin's).
 */
export async function spanPercentiles(sql: Db, statId: SeriesIds, from: Date, to: Date, ps: Percentile[]): Promise<number[] | null> {
  const spanSeconds = (to.getTime() - from.getTime()) / 1000
  if (spanSeconds <= 0 || !ps.length) return null
  const w: Window = { requested: 'custom', from, to, bucketSeconds: spanSeconds }
  const exact = spanSeconds < 3_600
  const values = [...(await bucketPercentiles(sql, statId, w, ps, from.getTime() / 1000, exact)).values()]
  if (!values.length) return null
  if (exact) return values[0]
  const hours: Window = { requested: 'custom', from: new Date(Math.floor(from.getTime() / HOUR) * HOUR), to, bucketSeconds: 3_600 }
  const buckets = await readBuckets(sql, statId, 'gauge', hours)
  let min = Infinity
  let max = -Infinity
  for (const b of buckets)
    if ('min' in b) {
      min = Math.min(min, b.min)
      max = Math.max(max, b.max)
    }
  return values[0].map((v) => (min <= max ? Math.min(max, Math.max(min, v)) : v))
}

/**
 * Each bucket's percentiles by bucket start (Unix seconds), buckets of w.bucketSeconds counted from `origin`
 * (Unix seconds; 0 for chart buckets, which align to multiples of their size in UTC).
 */
async function bucketPercentiles(
  sql: Db,
  statId: SeriesIds,
  w: Window,
  ps: Percentile[],
  origin: number,
  exact: boolean,
): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>()
  const b = w.bucketSeconds
  if (w.from >= w.to) return out
  if (exact) {
    const rows = await sql<{ t: string; v: number[] }[]>`
      select (floor((date_part('epoch', ts) - ${origin}::float8) / ${b}::float8) * ${b}::float8 + ${origin}::float8)::float8 as t,
             percentile_disc(${ps.map((p) => p.q)}::float8[]) within group (order by value) as v
      from unnest(${idsOf(statId)}::uuid[]) as sid(id), lateral stat_points(sid.id, ${w.from}, ${w.to}) group by 1`
    for (const r of rows) out.set(Number(r.t), r.v.map(Number))
    return out
  }
  const sketches = await mergedSketches(sql, statId, w, origin)
  for (const [t, s] of sketches)
    out.set(
      t,
      ps.map((p) => s.quantile(p.q)!),
    )
  return out
}

/**
 * The merged sketch of each bucket of a window. Chart windows (origin 0) have buckets of whole hours and start on
 * a bucket edge; a span (one bucket, origin its start) may start and end inside an hour, whose parts in the span
 * are read raw.
 */
async function mergedSketches(sql: Db, statId: SeriesIds, w: Window, origin: number): Promise<Map<number, Sketch>> {
  const b = w.bucketSeconds * 1000
  const from = w.from.getTime()
  const o = origin * 1000
  // The first whole hour: the hour sketches serve [headEdge, hourEdge), raw points the rest.
  const headEdge = new Date(Math.min(Math.ceil(from / HOUR) * HOUR, Math.max(from, Math.floor(w.to.getTime() / HOUR) * HOUR)))
  const hourEdge = new Date(Math.max(headEdge.getTime(), Math.floor(w.to.getTime() / HOUR) * HOUR))
  // The coarsest tier whose period divides the bucket serves the whole periods before the current one,
  // except those holding an unsketched hour (their other hours come from the hour sketches). Buckets off the
  // UTC grid (a span) use hours only.
  const tier = o % b === 0 ? [...COARSE_TIERS].reverse().find((t) => b % (t.seconds * 1000) === 0) : undefined
  const P = (tier?.seconds ?? 3_600) * 1000
  const periodEdge = new Date(tier ? Math.max(from, Math.floor(hourEdge.getTime() / P) * P) : headEdge.getTime())
  const binned = (ranges: Array<[number, number]>) => sql<{ t: string; s: number; k: number; n: number }[]>`
    select (floor((date_part('epoch', ts) - ${origin}::float8) / ${w.bucketSeconds}::float8) * ${w.bucketSeconds}::float8 + ${origin}::float8)::float8 as t, s, k, count(*)::int as n from (
      ${pointsIn(sql, statId, ranges, binOf(sql))}
    ) x group by 1, 2, 3`
  // One round trip in the common case (bench:reads, 30d p95: the look-up of unsketched hours used to come first, a
  // whole round trip before the reads; on a busy machine each round trip is one more wait for a CPU). Everything
  // that does not depend on which hours are unsketched is read beside that look-up; only when some complete hour is
  // unsketched (pending a refresh, marked for a rebuild) does a second round trip read its period's hour sketches
  // and its raw points. One statement doing it all was tried: its estimates (a lateral scan per unsketched hour)
  // crossed jit_above_cost, and JIT compilation took 50-1,000 ms a read.
  // The stale hours and the sketches come from one statement, under one snapshot (staleHours says why). The raw
  // edges do not depend on them and are read beside.
  const [rows, edges] = await Promise.all([
    sql<SketchRow[]>`
      ${staleHours(sql, statId, headEdge, hourEdge)}
      ${tier ? sql`union all select 'period', bucket, sketch from ${sql(tier.table)} where stat_id = any(${idsOf(statId)}::uuid[]) and bucket >= ${w.from} and bucket < ${periodEdge}` : sql``}
      union all
      select 'sketch', bucket, sketch from sketches_1h where stat_id = any(${idsOf(statId)}::uuid[]) and bucket >= ${periodEdge} and bucket < ${hourEdge}`,
    binned([
      [from, headEdge.getTime()],
      [hourEdge.getTime(), w.to.getTime()],
    ]),
  ])
  const [periods, current] = [ofKind(rows, 'period'), ofKind(rows, 'sketch')]
  const stale = new Set(ofKind(rows, 'stale').map((r) => r.bucket.getTime()))
  const stalePeriods = [...new Set([...stale].map((h) => Math.floor(h / P) * P))]
  const olderStale = stalePeriods.filter((p) => p < periodEdge.getTime())
  const [older, staleRaw] = stale.size
    ? await Promise.all([
        olderStale.length
          ? sql<{ bucket: Date; sketch: Uint8Array }[]>`
            select bucket, sketch from sketches_1h where stat_id = any(${idsOf(statId)}::uuid[]) and bucket >= ${headEdge} and bucket < ${periodEdge}
              and date_bin(${`${P / 1000} seconds`}::interval, bucket, timestamptz 'epoch') = any(${olderStale.map((d) => new Date(d).toISOString())}::timestamptz[])`
          : [],
        binned(runsOf(stale)),
      ])
    : [[], []]
  const hours = [...current, ...older]
  const raw = [...edges, ...staleRaw]
  const bucketOf = (ms: number) => Math.floor((ms - o) / b) * (b / 1000) + origin
  const out = new Map<number, Sketch>()
  const into = (ms: number) => {
    const t = bucketOf(ms)
    let s = out.get(t)
    if (!s) out.set(t, (s = new Sketch()))
    return s
  }
  for (const d of periods) if (!stalePeriods.includes(d.bucket.getTime())) into(d.bucket.getTime()).mergeEncoded(d.sketch)
  for (const h of hours) if (!stale.has(h.bucket.getTime())) into(h.bucket.getTime()).mergeEncoded(h.sketch)
  for (const r of raw) {
    const t = Number(r.t)
    let s = out.get(t)
    if (!s) out.set(t, (s = new Sketch()))
    s.add(r.s, r.k, r.n)
  }
  return out
}

/** A row of a read of sketches with the stale hours beside them (staleHours): a sketch of a tier, or a stale hour (no sketch). */
type SketchRow = { kind: 'stale' | 'period' | 'sketch'; bucket: Date; sketch: Uint8Array | null }

/** The rows of one kind (a stale hour's sketch is null; the others' are not). */
function ofKind(rows: SketchRow[], kind: SketchRow['kind']): Array<SketchRow & { sketch: Uint8Array }> {
  return rows.filter((r) => r.kind === kind) as Array<SketchRow & { sketch: Uint8Array }>
}

/**
 * The hours in [from, to) whose sketches cannot be used, as SketchRows of kind 'stale': points waiting for the
 * refresh (rollup_pending) or marked for a rebuild (sketch_dirty). For a union with the sketch reads, so that both
 * are one snapshot's: read on two connections, a refresh committing between them (an hour's sketch built and its
 * mark taken off, in one transaction) could be seen by one and not the other, and an hour with points was then
 * neither sketched nor stale, and left out.
 */
function staleHours(sql: Db, statId: SeriesIds, from: Date, to: Date) {
  return sql`
    select 'stale' as kind, h as bucket, null::bytea as sketch from (
      select date_trunc('hour', bucket, 'UTC') as h from rollup_pending where stat_id = any(${idsOf(statId)}::uuid[]) and bucket >= ${from} and bucket < ${to}
      union
      select hour from sketch_dirty where stat_id = any(${idsOf(statId)}::uuid[]) and hour >= ${from} and hour < ${to}
    ) s`
}

/** Sorted hour starts (ms) as [from, to) runs of consecutive hours. */
function runsOf(hours: Set<number>): Array<[number, number]> {
  const runs: Array<[number, number]> = []
  for (const h of [...hours].sort((a, b) => a - b)) {
    const last = runs[runs.length - 1]
    if (last && last[1] === h) last[1] = h + HOUR
    else runs.push([h, h + HOUR])
  }
  return runs
}

/**
 * The points of a stat in a few time ranges (`ts` and `cols`: their bins, or their values), as one union of index range scans. (A join of the points
 * with an array of hours let the planner scan all of a stat's points: 1.3 s on 10 million.) Past 20 ranges
 * (an import not yet refreshed), one scan from the first to the last, keeping the points inside a range.
 */
function pointsIn(sql: Db, statId: SeriesIds, ranges: Array<[number, number]>, cols: postgres.Fragment) {
  const iso = (ms: number) => new Date(ms).toISOString()
  const live = ranges.filter(([a, b]) => a < b)
  if (live.length > 20) {
    const starts = live.map(([a]) => iso(a))
    const ends = live.map(([, b]) => iso(b))
    return sql`select ts, ${cols} from unnest(${idsOf(statId)}::uuid[]) as sid(id), lateral stat_points(sid.id, ${iso(live[0][0])}, ${iso(live[live.length - 1][1])})
      where true
      and exists (select 1 from unnest(${starts}::timestamptz[], ${ends}::timestamptz[]) as r(a, b) where ts >= r.a and ts < r.b)`
  }
  if (!live.length)
    return sql`select ts, ${cols} from unnest(${idsOf(statId)}::uuid[]) as sid(id), lateral stat_points(sid.id, ${iso(0)}, ${iso(0)})`
  return live
    .map(
      ([a, b]) =>
        sql`select ts, ${cols} from unnest(${idsOf(statId)}::uuid[]) as sid(id), lateral stat_points(sid.id, ${iso(a)}, ${iso(b)})`,
    )
    .reduce((acc, q) => sql`${acc} union all ${q}`)
}

/**
 * The buckets with their percentiles added (`p50`, `p95`, ...). A sketch's value is clamped to the bucket's
 * exact min and max (kept in the rollups' columns), so p0 and p100 are exact and nothing falls outside them.
 */
export function withPercentiles(
  buckets: Bucket[],
  ps: Percentile[],
  values: Map<number, number[]>,
): Array<Bucket & Record<string, number>> {
  return buckets.map((bucket) => {
    const v = values.get(bucket.t)
    if (!v || !('min' in bucket)) return bucket
    const extra: Record<string, number> = {}
    ps.forEach((p, i) => {
      extra[p.key] = Math.min(bucket.max, Math.max(bucket.min, v[i]))
    })
    return { ...bucket, ...extra }
  })
}

/**
 * A percentile alert replayed (the threshold helper's back-test): for each of `slots` minutes from `from` (Unix
 * seconds, minute-aligned), the percentile of the gauge's points in the `windowMinutes` before that minute's end,
 * what a live alert evaluated at that instant compares; null where the window holds no point. One read of the
 * points binned per minute the way a sketch files them, then one sketch slid along (a minute's bins added as it
 * enters the window, taken out as it leaves) and clamped to the window's exact min and max: so within 1 % of the
 * live value (exact under an hour) at every minute, at the cost of one pass over the lookback's points.
 */
export async function slidingPercentiles(
  sql: Db,
  statId: SeriesIds,
  from: number,
  slots: number,
  windowMinutes: number,
  p: Percentile,
): Promise<Array<number | null>> {
  const out: Array<number | null> = new Array(slots).fill(null)
  if (slots <= 0) return out
  const first = from - (windowMinutes - 1) * 60
  const rows = await sql<{ m: number; s: number; k: number; n: number; lo: number; hi: number }[]>`
    select ((floor(date_part('epoch', ts) / 60)::bigint * 60 - ${first}) / 60)::int as m, s, k, count(*)::int as n, min(value) as lo, max(value) as hi
    from (select ts, value, ${binOf(sql)} from unnest(${idsOf(statId)}::uuid[]) as sid(id), lateral stat_points(sid.id, ${new Date(first * 1000)}, ${new Date((from + slots * 60) * 1000)})) x
    group by 1, 2, 3`
  // Minute index (from `first`) -> its bins, and its min and max.
  const minutes = slots + windowMinutes - 1
  const bins: Array<Array<[number, number, number]> | undefined> = new Array(minutes)
  const lo = new Float64Array(minutes).fill(Infinity)
  const hi = new Float64Array(minutes).fill(-Infinity)
  for (const r of rows) {
    ;(bins[r.m] ??= []).push([r.s, r.k, r.n])
    lo[r.m] = Math.min(lo[r.m], r.lo)
    hi[r.m] = Math.max(hi[r.m], r.hi)
  }
  const sketch = new Sketch()
  // Monotonic deques of minute indices: the window's min and max in O(1) per minute.
  const mins: number[] = []
  const maxs: number[] = []
  for (let m = 0; m < minutes; m++) {
    for (const [s, k, n] of bins[m] ?? []) sketch.add(s, k, n)
    const leaving = m - windowMinutes
    if (leaving >= 0) for (const [s, k, n] of bins[leaving] ?? []) sketch.add(s, k, -n)
    if (lo[m] !== Infinity) {
      while (mins.length && lo[mins[mins.length - 1]] >= lo[m]) mins.pop()
      mins.push(m)
      while (maxs.length && hi[maxs[maxs.length - 1]] <= hi[m]) maxs.pop()
      maxs.push(m)
    }
    while (mins.length && mins[0] <= leaving) mins.shift()
    while (maxs.length && maxs[0] <= leaving) maxs.shift()
    const slot = m - (windowMinutes - 1)
    if (slot < 0 || !sketch.count) continue
    out[slot] = Math.min(hi[maxs[0]], Math.max(lo[mins[0]], sketch.quantile(p.q)!))
  }
  return out
}
