// Chart reads: rollups at the coarsest resolution that fits the bucket size,
// plus the per-minute aggregates not yet folded in (rollup_pending), so a
// point is visible as soon as it is persisted.
import type { Db } from '../db.js'
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

/** Buckets of one stat over a window: counters summed, gauges averaged with min and max; empty buckets omitted. */
export async function readBuckets(sql: Db, statId: string, kind: Kind, w: Window): Promise<Bucket[]> {
  const b = w.bucketSeconds
  const table = b % 86_400 === 0 ? sql`rollups_1d` : b % 3_600 === 0 ? sql`rollups_1h` : sql`rollups_1m`
  const rows = await sql<Row[]>`
    select (floor(extract(epoch from bucket) / ${b}) * ${b})::bigint as t, sum(count)::bigint as n, sum(sum) as sum, min(min) as min, max(max) as max
    from (
      select bucket, count, sum, min, max from ${table} where stat_id = ${statId} and bucket >= ${w.from} and bucket < ${w.to}
      union all
      select bucket, count, sum, min, max from rollup_pending where stat_id = ${statId} and bucket >= ${w.from} and bucket < ${w.to}
    ) x
    group by 1 order by 1`
  return rows.map((r) => {
    const n = Number(r.n)
    return kind === 'counter'
      ? { t: Number(r.t), value: r.sum, n }
      : { t: Number(r.t), value: r.sum / n, min: r.min, max: r.max, n }
  })
}
