// The dashboard summary (docs/decisions.md §I-4.4, §6): every stat
// of the account over one range, in a fixed number of queries whatever the
// number of stats.
import type { Db } from '../db.js'
import type { RangeName, Window } from './ranges.js'
import { readBucketsMany, type Bucket } from './read.js'
import type { Kind } from './repo.js'

/**
 * Dashboard buckets are coarser than a chart's (they draw sparklines for every stat at once) and are
 * chosen to be served by the hourly and daily rollups: a 24 h dashboard of 1,000 stats reads about 25
 * rows per stat instead of 1,440. Totals, averages, minima and maxima are the same at any bucket size.
 */
export const DASHBOARD_BUCKETS: Record<RangeName, number> = {
  '1h': 300,
  '6h': 3_600,
  '24h': 3_600,
  '7d': 21_600,
  '30d': 86_400,
  '90d': 86_400,
  '180d': 86_400,
}

/**
 * The dashboard covers exactly the chart's window of the same range (one definition of a window: the stats
 * list's "24 h total" is the stat page's and the embed's), in coarser buckets from the first whole one on; the
 * part before it is read in the chart's own buckets. Aligning the start down to the coarser bucket instead
 * counted up to 45 minutes more than the stat page for "24 h". Returns the window as answered (its
 * bucket_seconds the coarse one) and the windows to read.
 */
export function dashboardWindows(chart: Window): { answer: Window; reads: Window[] } {
  const bucket = DASHBOARD_BUCKETS[chart.requested as RangeName] ?? chart.bucketSeconds
  const firstWhole = new Date(Math.ceil(chart.from.getTime() / 1000 / bucket) * bucket * 1000)
  const body: Window = { ...chart, from: firstWhole < chart.to ? firstWhole : chart.to, bucketSeconds: bucket }
  const head: Window = { ...chart, to: body.from }
  return { answer: { ...chart, bucketSeconds: bucket }, reads: head.from < head.to ? [head, body] : [body] }
}

interface StatRow {
  id: string
  name: string
  kind: Kind
  description: string | null
  last_value: number | null
  last_point_at: Date | null
  series: string[]
}

function summarise(kind: Kind, points: Bucket[]) {
  const n = points.reduce((s, p) => s + p.n, 0)
  if (kind === 'counter') return { total: points.reduce((s, p) => s + p.value, 0), n }
  if (!n) return { average: null, min: null, max: null, n: 0 }
  const gauges = points as Array<Extract<Bucket, { min: number }>>
  return {
    average: gauges.reduce((s, p) => s + p.value * p.n, 0) / n,
    min: Math.min(...gauges.map((p) => p.min)),
    max: Math.max(...gauges.map((p) => p.max)),
    n,
  }
}

/** Every stat of the account over the chart window `w` (see dashboardWindows). */
export async function dashboard(sql: Db, accountId: string, w: Window) {
  const stats = await sql<StatRow[]>`
    select s.id, s.name, s.kind, s.description, last.value as last_value, last.ts as last_point_at,
           array(select x.id from stats x where x.id = s.id or x.parent_id = s.id)::text[] as series
    from stats s
    -- Hot rows and day blocks alike (sql/0027), the newest of the stat's series (docs/decisions.md §24).
    left join lateral (select p.ts, p.value from stats x cross join lateral (select stat_newest(x.id, '-infinity', 'infinity') as ts) n
      cross join lateral stat_points(x.id, n.ts, n.ts + interval '1 microsecond') p
      where x.id = s.id or x.parent_id = s.id order by p.ts desc limit 1) last on true
    where s.account_id = ${accountId} and s.parent_id is null order by s.name`
  const parts = await Promise.all(dashboardWindows(w).reads.map((part) => readBucketsMany(sql, stats, part)))
  return stats.map((s) => {
    const points = parts.flatMap((part) => part.get(s.id) ?? [])
    return {
      id: s.id,
      name: s.name,
      kind: s.kind,
      description: s.description,
      last_value: s.last_value,
      last_point_at: s.last_point_at?.toISOString() ?? null,
      summary: summarise(s.kind, points),
      points,
      // Its tagged series, or 1 for the stat alone (docs/decisions.md §24).
      series: Math.max(1, s.series.length - 1),
    }
  })
}
