// Chart reads: rollups at the coarsest resolution that fits the bucket size,
// plus the raw tail not yet rolled up, so a point is visible as soon as it is
// persisted. Plain PostgreSQL: the tail is the per-minute aggregates not yet
// folded in (rollup_pending). TimescaleDB: rollups_* are real-time continuous
// aggregates that already include the tail, so the union is left out.
import type postgres from 'postgres'
import type { Db } from '../db.js'
import { usesTimescale } from '../points/storage.js'
import type { Kind } from './repo.js'
import type { Window } from './ranges.js'

export type Bucket = { t: number; value: number; n: number } | { t: number; value: number; min: number; max: number; n: number }

/**
 * One series' id, or several whose points are read as one (a stat with its tagged series, or a group of
 * them: docs/decisions.md §24): counters summed, gauges weighted by observation count, min and max of all;
 * percentiles merge their sketches and run percentile_disc over their points together.
 */
export type SeriesIds = string | readonly string[]
export const idsOf = (ids: SeriesIds): string[] => (typeof ids === 'string' ? [ids] : [...ids])

/** A row of bucketRows: one series' aggregates of one bucket (t and n: bigints as text, or numbers once unpacked). */
export interface BucketRow {
  stat_id: string
  t: string | number
  n: string | number
  sum: number
  min: number
  max: number
}

/** A bucket's aggregates before a kind gives them their form: what several series' buckets are merged from. */
export interface Agg {
  t: number
  n: number
  sum: number
  min: number
  max: number
}

/** A bucket as a stat of `kind` answers it: a counter's sum, a gauge's average with min and max. */
export const bucketOf = (kind: Kind, a: Agg): Bucket =>
  kind === 'counter' ? { t: a.t, value: a.sum, n: a.n } : { t: a.t, value: a.sum / a.n, min: a.min, max: a.max, n: a.n }

/** Several lists of buckets merged into one, by time (a group-by's rest read as one, docs/decisions.md §24). */
export function mergeAggs(lists: readonly (readonly Agg[])[]): Agg[] {
  const byT = new Map<number, Agg>()
  for (const list of lists)
    for (const a of list) {
      const seen = byT.get(a.t)
      if (!seen) byT.set(a.t, { ...a })
      else {
        seen.n += a.n
        seen.sum += a.sum
        seen.min = Math.min(seen.min, a.min)
        seen.max = Math.max(seen.max, a.max)
      }
    }
  return [...byT.values()].sort((x, y) => x.t - y.t)
}

/** The rollup that serves a window's buckets, the edge past which the 1 m rollup does, and the union of both with the tail. */
async function sources(sql: Db, ids: readonly string[], w: Window) {
  const b = w.bucketSeconds
  const timescale = await usesTimescale(sql)
  // Five minutes only on plain PostgreSQL (sql/0048): a 24-hour chart's 15-minute buckets read 288 rows, not 1,440.
  const [table, size] =
    b % 86_400 === 0
      ? [sql`rollups_1d`, 86_400]
      : b % 3_600 === 0
        ? [sql`rollups_1h`, 3_600]
        : b % 300 === 0 && !timescale
          ? [sql`rollups_5m`, 300]
          : [sql`rollups_1m`, 60]
  const edge = new Date(Math.max(w.from.getTime(), Math.floor(w.to.getTime() / (size * 1000)) * size * 1000))
  const tail = timescale
    ? sql``
    : sql`
      union all
      select stat_id, bucket, count, sum, min, max from rollup_pending where stat_id = any(${ids}::uuid[]) and bucket >= ${w.from} and bucket < ${w.to}`
  return { table, size, edge, tail }
}

/**
 * Buckets of several sets of series over one window, each set read as one (a stat's series, a group's), and with
 * `total` all of them together too, in one statement: every series' rollups are scanned once and added up in SQL,
 * by set and bucket (a grouping set adds the total in the same pass). Sending every (series, bucket) row to be added
 * up in JS, and a statement more for a group-by's whole and its `other`, cost far more (docs/benchmarks.md, group-by reads).
 */
export async function readSets(
  sql: Db,
  sets: readonly (readonly string[])[],
  w: Window,
  total = false,
): Promise<{ sets: Agg[][]; total: Agg[] }> {
  const out = { sets: sets.map((): Agg[] => []), total: [] as Agg[] }
  const ids = sets.flat()
  if (!ids.length) return out
  const keys = sets.flatMap((set, k) => set.map(() => k))
  const { table, edge, tail } = await sources(sql, ids, w)
  const b = w.bucketSeconds
  const one = sets.length === 1
  // One set: no join, the set is the whole. Several: each series' set by a join on a small array.
  const k = one ? sql`0` : sql`o.k`
  // Each set's buckets come back as one bytea of 40 bytes a bucket (t, n, sum, min, max as float8, in the binary
  // send format), decoded natively: a group-by's thousands of (group, bucket) rows parsed value by value were
  // most of what the read cost the client (as for rollupArrays, shared/stats/hourly.ts).
  const rows = await sql<{ k: number | null; b: Buffer }[]>`
    select k, string_agg(float8send(t) || float8send(n) || float8send(sum) || float8send(min) || float8send(max), ''::bytea) as b
    from (
      select k, t::float8 as t, sum(count)::float8 as n, sum(sum) as sum, min(min) as min, max(max) as max
      from (
        select ${k} as k, floor(date_part('epoch', bucket) / ${b}) * ${b} as t, count, sum, min, max
        from (
          select stat_id, bucket, count, sum, min, max from ${table} where stat_id = any(${ids}::uuid[]) and bucket >= ${w.from} and bucket < ${edge}
          union all
          select stat_id, bucket, count, sum, min, max from rollups_1m where stat_id = any(${ids}::uuid[]) and bucket >= ${edge} and bucket < ${w.to}${tail}
        ) x${one ? sql`` : sql` join unnest(${ids}::uuid[], ${keys}::int[]) as o(id, k) on o.id = x.stat_id`}
      ) y
      group by ${total && !one ? sql`grouping sets ((k, t), (t))` : sql`k, t`}
    ) z
    group by k`
  for (const r of rows) {
    const view = new DataView(r.b.buffer, r.b.byteOffset, r.b.byteLength)
    const list: Agg[] = new Array(r.b.byteLength / 40)
    for (let i = 0, o = 0; i < list.length; i++, o += 40)
      list[i] = {
        t: view.getFloat64(o),
        n: view.getFloat64(o + 8),
        sum: view.getFloat64(o + 16),
        min: view.getFloat64(o + 24),
        max: view.getFloat64(o + 32),
      }
    list.sort((x, y) => x.t - y.t)
    if (r.k === null) out.total = list
    else out.sets[r.k] = list
  }
  if (total && one) out.total = out.sets[0]
  return out
}

/**
 * Buckets of several stats over one window, in one query: counters summed, gauges averaged with min and
 * max; empty buckets omitted. The coarse rollup serves only its buckets that end by `to`; the rest of the
 * window comes from the 1 m rollup, so a window ending inside an hour (or a day) reads the same before and
 * after a refresh folds it.
 */
export async function readBucketsMany(
  sql: Db,
  stats: Array<{ id: string; kind: Kind; series?: readonly string[] }>,
  w: Window,
): Promise<Map<string, Bucket[]>> {
  const out = new Map<string, Bucket[]>(stats.map((s) => [s.id, []]))
  if (!stats.length) return out
  // `series`: the ids read as the one answer under `id` (a stat and its tagged series, docs/decisions.md §24).
  const ownerOf = new Map<string, string>()
  for (const s of stats) for (const id of s.series ?? [s.id]) ownerOf.set(id, s.id)
  const ids = [...ownerOf.keys()]
  // A stat of several series: all of them added up in SQL, by stat and bucket (readSets).
  if (ids.length > stats.length) {
    const read = await readSets(
      sql,
      stats.map((s) => s.series ?? [s.id]),
      w,
    )
    for (const [i, s] of stats.entries())
      out.set(
        s.id,
        read.sets[i].map((a) => bucketOf(s.kind, a)),
      )
    return out
  }
  const kinds = new Map(stats.map((s) => [s.id, s.kind]))
  const { own, query } = await bucketRows(sql, ids, w)
  addRows(
    await sql<BucketRow[]>`${query}`,
    (id) => ownerOf.get(id)!,
    (id) => kinds.get(id)!,
    own,
    out,
  )
  return out
}

/**
 * The statement of readBucketsMany's rows, (stat_id, t, n, sum, min, max) by series and bucket, over the series `ids`
 * (stats/chart.ts embeds it in its look-up); `own` as addRows needs it.
 */
export async function bucketRows(sql: Db, ids: readonly string[], w: Window): Promise<{ own: boolean; query: postgres.Fragment }> {
  const b = w.bucketSeconds
  const { table, size, edge, tail } = await sources(sql, ids, w)
  // Buckets of the rollup's own size (1 h from rollups_1h, 1 min from rollups_1m, ...) are already one row
  // per stat and bucket: those rows are read as they are and only the tail is grouped; the few buckets
  // that appear in both are merged below. Grouping a month of hourly rows for 500 stats in SQL cost
  // several times the read itself.
  const own = b === size
  const bucketT = sql`(floor(date_part('epoch', bucket) / ${b}) * ${b})::bigint`
  const query = own
    ? sql`
    select stat_id, date_part('epoch', bucket)::bigint as t, count as n, sum, min, max
    from ${table} where stat_id = any(${ids}::uuid[]) and bucket >= ${w.from} and bucket < ${edge}
    union all
    select stat_id, ${bucketT} as t, sum(count)::bigint as n, sum(sum) as sum, min(min) as min, max(max) as max
    from (
      select stat_id, bucket, count, sum, min, max from rollups_1m where stat_id = any(${ids}::uuid[]) and bucket >= ${edge} and bucket < ${w.to}${tail}
    ) x
    group by 1, 2`
    : sql`
    select stat_id, ${bucketT} as t, sum(count)::bigint as n, sum(sum) as sum, min(min) as min, max(max) as max
    from (
      select stat_id, bucket, count, sum, min, max from ${table} where stat_id = any(${ids}::uuid[]) and bucket >= ${w.from} and bucket < ${edge}
      union all
      select stat_id, bucket, count, sum, min, max from rollups_1m where stat_id = any(${ids}::uuid[]) and bucket >= ${edge} and bucket < ${w.to}${tail}
    ) x
    group by 1, 2 order by 1, 2`
  return { own, query }
}

/** bucketRows' rows, in the order read, into their owners' buckets in `out`: a bucket read from both a rollup and the tail is merged. */
export function addRows(
  rows: Iterable<BucketRow>,
  ownerOf: (statId: string) => string,
  kindOf: (owner: string) => Kind,
  own: boolean,
  out: Map<string, Bucket[]>,
): void {
  const merged = new Map<string, Map<number, { n: number; sum: number; min: number; max: number }>>()
  for (const r of rows) {
    const owner = ownerOf(r.stat_id)
    let byT = merged.get(owner)
    if (!byT) merged.set(owner, (byT = new Map()))
    const t = Number(r.t)
    const n = Number(r.n)
    const seen = byT.get(t)
    if (seen) {
      seen.n += n
      seen.sum += r.sum
      seen.min = Math.min(seen.min, r.min)
      seen.max = Math.max(seen.max, r.max)
    } else {
      byT.set(t, { n, sum: r.sum, min: r.min, max: r.max })
    }
  }
  for (const [id, byT] of merged) {
    const kind = kindOf(id)
    const list = out.get(id)!
    for (const [t, a] of byT) list.push(bucketOf(kind, { t, ...a }))
    if (own) list.sort((x, y) => x.t - y.t)
  }
}

/** Buckets of one series, or of several read as one, over a window (see readBucketsMany). */
export async function readBuckets(sql: Db, statId: SeriesIds, kind: Kind, w: Window): Promise<Bucket[]> {
  const ids = idsOf(statId)
  return (await readBucketsMany(sql, [{ id: ids[0], kind, series: ids }], w)).get(ids[0])!
}
