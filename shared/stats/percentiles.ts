// Percentiles of a gauge per chart bucket (decisions.md section 20), nearest-rank, within 1 % of exact.
// Buckets under an hour (ranges 1h, 6h, 24h) are computed exactly from the raw points (percentile_disc is
// nearest-rank). Buckets of whole hours merge sketches (shared/points/sketches.ts): day sketches for
// 90d and 180d, 6-hour sketches for 30d, hour sketches otherwise (7d), and the raw points, binned the way a sketch
// files them, of every hour with no up-to-date sketch: the current hour, hours whose points are still in
// rollup_pending, and hours marked for a rebuild. So a point is in the percentiles as soon as it is
// persisted, as it is in the averages, and a refresh changes no answer beyond the sketch's 1 %.
import type { Db } from '../db.js'
import { invalid } from '../errors.js'
import { binOf, COARSE_TIERS, Sketch } from '../points/sketches.js'
import type { Bucket } from './read.js'
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
  if (kind !== 'gauge') throw invalid('percentiles_on_counter', 'invalid percentiles: only gauges have percentiles (a counter\'s bucket is a sum)')
  const seen = new Map<string, Percentile>()
  for (const part of raw.split(',')) {
    const p = Number(part)
    seen.set(`p${p}`, { key: `p${p}`, q: p / 100 })
  }
  return [...seen.values()]
}

/** Each bucket's percentiles, in the order asked, by bucket start (Unix seconds). */
export async function readPercentiles(sql: Db, statId: string, w: Window, ps: Percentile[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>()
  const b = w.bucketSeconds
  if (w.from >= w.to) return out
  if (b % 3_600 !== 0) {
    const rows = await sql<{ t: string; v: number[] }[]>`
      select (floor(date_part('epoch', ts) / ${b}) * ${b})::bigint as t,
             percentile_disc(${ps.map((p) => p.q)}::float8[]) within group (order by value) as v
      from stat_points(${statId}, ${w.from}, ${w.to}) group by 1`
    for (const r of rows) out.set(Number(r.t), r.v.map(Number))
    return out
  }
  const sketches = await mergedSketches(sql, statId, w)
  for (const [t, s] of sketches) out.set(t, ps.map((p) => s.quantile(p.q)!))
  return out
}

/** The merged sketch of each bucket of a window whose buckets are whole hours. */
async function mergedSketches(sql: Db, statId: string, w: Window): Promise<Map<number, Sketch>> {
  const b = w.bucketSeconds * 1000
  const from = w.from.getTime()
  const hourEdge = new Date(Math.max(from, Math.floor(w.to.getTime() / HOUR) * HOUR))
  const staleRows = await sql<{ h: Date }[]>`
    select date_trunc('hour', bucket, 'UTC') as h from rollup_pending where stat_id = ${statId} and bucket >= ${w.from} and bucket < ${hourEdge}
    union
    select hour from sketch_dirty where stat_id = ${statId} and hour >= ${w.from} and hour < ${hourEdge}`
  const stale = new Set(staleRows.map((r) => r.h.getTime()))
  // The coarsest tier whose period divides the bucket serves the whole periods before the current one,
  // except those holding an unsketched hour (their other hours come from the hour sketches).
  const tier = [...COARSE_TIERS].reverse().find((t) => b % (t.seconds * 1000) === 0)
  const P = (tier?.seconds ?? 3_600) * 1000
  const periodEdge = new Date(tier ? Math.max(from, Math.floor(hourEdge.getTime() / P) * P) : from)
  const stalePeriods = [...new Set([...stale].map((h) => Math.floor(h / P) * P))]
  const [periods, hours, raw] = await Promise.all([
    tier
      ? sql<{ bucket: Date; sketch: Uint8Array }[]>`
          select bucket, sketch from ${sql(tier.table)} where stat_id = ${statId} and bucket >= ${w.from} and bucket < ${periodEdge}`
      : [],
    sql<{ bucket: Date; sketch: Uint8Array }[]>`
      select bucket, sketch from sketches_1h where stat_id = ${statId} and bucket >= ${w.from} and bucket < ${hourEdge}
        and (bucket >= ${periodEdge} or date_bin(${`${P / 1000} seconds`}::interval, bucket, timestamptz 'epoch') = any(${stalePeriods.map((d) => new Date(d).toISOString())}::timestamptz[]))`,
    sql<{ t: string; s: number; k: number; n: number }[]>`
      select (floor(date_part('epoch', ts) / ${w.bucketSeconds}) * ${w.bucketSeconds})::bigint as t, s, k, count(*)::int as n from (
        ${unsketched(sql, statId, [...runsOf(stale), [hourEdge.getTime(), w.to.getTime()]])}
      ) x group by 1, 2, 3`,
  ])
  const out = new Map<number, Sketch>()
  const into = (ms: number) => {
    const t = Math.floor(ms / b) * (b / 1000)
    let s = out.get(t)
    if (!s) out.set(t, (s = new Sketch()))
    return s
  }
  for (const d of periods) if (!stalePeriods.includes(d.bucket.getTime())) into(d.bucket.getTime()).mergeEncoded(d.sketch)
  for (const h of hours) if (!stale.has(h.bucket.getTime())) into(h.bucket.getTime()).mergeEncoded(h.sketch)
  for (const r of raw) into(Number(r.t) * 1000).add(r.s, r.k, r.n)
  return out
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
 * The binned points of a stat in a few time ranges, as one union of index range scans. (A join of the points
 * with an array of hours let the planner scan all of a stat's points: 1.3 s on 10 million.) Past 20 ranges
 * (an import not yet refreshed), one scan from the first to the last, keeping the points inside a range.
 */
function unsketched(sql: Db, statId: string, ranges: Array<[number, number]>) {
  const iso = (ms: number) => new Date(ms).toISOString()
  const live = ranges.filter(([a, b]) => a < b)
  if (live.length > 20) {
    const starts = live.map(([a]) => iso(a))
    const ends = live.map(([, b]) => iso(b))
    return sql`select ts, ${binOf(sql)} from stat_points(${statId}, ${iso(live[0][0])}, ${iso(live[live.length - 1][1])})
      where true
      and exists (select 1 from unnest(${starts}::timestamptz[], ${ends}::timestamptz[]) as r(a, b) where ts >= r.a and ts < r.b)`
  }
  if (!live.length) return sql`select null::timestamptz as ts, 0 as s, 0 as k where false`
  return live.map(([a, b]) => sql`select ts, ${binOf(sql)} from stat_points(${statId}, ${iso(a)}, ${iso(b)})`)
    .reduce((acc, q) => sql`${acc} union all ${q}`)
}

/**
 * The buckets with their percentiles added (`p50`, `p95`, ...). A sketch's value is clamped to the bucket's
 * exact min and max (kept in the rollups' columns), so p0 and p100 are exact and nothing falls outside them.
 */
export function withPercentiles(buckets: Bucket[], ps: Percentile[], values: Map<number, number[]>): Array<Bucket & Record<string, number>> {
  return buckets.map((bucket) => {
    const v = values.get(bucket.t)
    if (!v || !('min' in bucket)) return bucket
    const extra: Record<string, number> = {}
    ps.forEach((p, i) => { extra[p.key] = Math.min(bucket.max, Math.max(bucket.min, v[i])) })
    return { ...bucket, ...extra }
  })
}
