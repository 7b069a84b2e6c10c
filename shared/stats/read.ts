// Chart reads: rollups at the coarsest resolution that fits the bucket size,
// plus the raw tail not yet rolled up, so a point is visible as soon as it is
// persisted. Plain PostgreSQL: the tail is the per-minute aggregates not yet
// folded in (rollup_pending). TimescaleDB: rollups_* are real-time continuous
// aggregates that already include the tail, so the union is left out.
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

interface Row {
  t: string
  n: string
  sum: number
  min: number
  max: number
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
  const several = ids.length > stats.length
  const kinds = new Map(stats.map((s) => [s.id, s.kind]))
  const b = w.bucketSeconds
  const [table, size] = b % 86_400 === 0 ? [sql`rollups_1d`, 86_400] : b % 3_600 === 0 ? [sql`rollups_1h`, 3_600] : [sql`rollups_1m`, 60]
  const edge = new Date(Math.max(w.from.getTime(), Math.floor(w.to.getTime() / (size * 1000)) * size * 1000))
  const tail = (await usesTimescale(sql))
    ? sql``
    : sql`
      union all
      select stat_id, bucket, count, sum, min, max from rollup_pending where stat_id = any(${ids}::uuid[]) and bucket >= ${w.from} and bucket < ${w.to}`
  // Buckets of the rollup's own size (1 h from rollups_1h, 1 min from rollups_1m, ...) are already one row
  // per stat and bucket: those rows are read as they are and only the tail is grouped; the few buckets
  // that appear in both are merged below. Grouping a month of hourly rows for 500 stats in SQL cost
  // several times the read itself.
  const own = b === size
  const bucketT = sql`(floor(date_part('epoch', bucket) / ${b}) * ${b})::bigint`
  const rows = await sql<(Row & { stat_id: string })[]>`${
    own
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
  }`
  const merged = new Map<string, Map<number, { n: number; sum: number; min: number; max: number }>>()
  for (const r of rows) {
    const owner = ownerOf.get(r.stat_id)!
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
    const kind = kinds.get(id)
    const list = out.get(id)!
    for (const [t, a] of byT)
      list.push(kind === 'counter' ? { t, value: a.sum, n: a.n } : { t, value: a.sum / a.n, min: a.min, max: a.max, n: a.n })
    if (own || several) list.sort((x, y) => x.t - y.t)
  }
  return out
}

/** Buckets of one series, or of several read as one, over a window (see readBucketsMany). */
export async function readBuckets(sql: Db, statId: SeriesIds, kind: Kind, w: Window): Promise<Bucket[]> {
  const ids = idsOf(statId)
  return (await readBucketsMany(sql, [{ id: ids[0], kind, series: ids }], w)).get(ids[0])!
}
