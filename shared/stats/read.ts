// Chart reads: rollups at the coarsest resolution that fits the bucket size,
// plus the raw tail not yet rolled up, so a point is visible as soon as it is
// persisted. Plain PostgreSQL: the tail is the per-minute aggregates not yet
// folded in (rollup_pending). TimescaleDB: rollups_* are real-time continuous
// aggregates that already include the tail, so the union is left out.
import type { Db } from '../db.js'
import { usesTimescale } from '../points/storage.js'
import type { Kind } from './repo.js'
import type { Window } from './ranges.js'

export type Bucket =
  | { t: number; value: number; n: number }
  | { t: number; value: number; min: number; max: number; n: number }

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
export async function readBucketsMany(sql: Db, stats: Array<{ id: string; kind: Kind }>, w: Window): Promise<Map<string, Bucket[]>> {
  const out = new Map<string, Bucket[]>(stats.map((s) => [s.id, []]))
  if (!stats.length) return out
  const ids = stats.map((s) => s.id)
  const kinds = new Map(stats.map((s) => [s.id, s.kind]))
  const b = w.bucketSeconds
  const [table, size] = b % 86_400 === 0 ? [sql`rollups_1d`, 86_400] : b % 3_600 === 0 ? [sql`rollups_1h`, 3_600] : [sql`rollups_1m`, 60]
  const edge = new Date(Math.max(w.from.getTime(), Math.floor(w.to.getTime() / (size * 1000)) * size * 1000))
  const tail = (await usesTimescale(sql)) ? sql`` : sql`
      union all
      select stat_id, bucket, count, sum, min, max from rollup_pending where stat_id = any(${ids}::uuid[]) and bucket >= ${w.from} and bucket < ${w.to}`
  const rows = await sql<(Row & { stat_id: string })[]>`
    select stat_id, (floor(extract(epoch from bucket) / ${b}) * ${b})::bigint as t, sum(count)::bigint as n, sum(sum) as sum, min(min) as min, max(max) as max
    from (
      select stat_id, bucket, count, sum, min, max from ${table} where stat_id = any(${ids}::uuid[]) and bucket >= ${w.from} and bucket < ${edge}
      union all
      select stat_id, bucket, count, sum, min, max from rollups_1m where stat_id = any(${ids}::uuid[]) and bucket >= ${edge} and bucket < ${w.to}${tail}
    ) x
    group by 1, 2 order by 1, 2`
  for (const r of rows) {
    const n = Number(r.n)
    out.get(r.stat_id)!.push(kinds.get(r.stat_id) === 'counter'
      ? { t: Number(r.t), value: r.sum, n }
      : { t: Number(r.t), value: r.sum / n, min: r.min, max: r.max, n })
  }
  return out
}

/** Buckets of one stat over a window (see readBucketsMany). */
export async function readBuckets(sql: Db, statId: string, kind: Kind, w: Window): Promise<Bucket[]> {
  return (await readBucketsMany(sql, [{ id: statId, kind }], w)).get(statId)!
}
