// The dashboard summary (interface 4.4, decisions.md section 6): every stat
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
  '1h': 300, '6h': 3_600, '24h': 3_600, '7d': 21_600, '30d': 86_400, '90d': 86_400, '180d': 86_400,
}

/** The window of a range, re-bucketed for the dashboard (from aligned down to the coarser bucket). */
export function dashboardWindow(w: Window): Window {
  const bucket = DASHBOARD_BUCKETS[w.requested as RangeName] ?? w.bucketSeconds
  const from = Math.floor(w.from.getTime() / 1000 / bucket) * bucket
  return { ...w, from: new Date(from * 1000), bucketSeconds: bucket }
}

interface StatRow {
  id: string
  name: string
  kind: Kind
  description: string | null
  last_value: number | null
  last_point_at: Date | null
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

export async function dashboard(sql: Db, accountId: string, w: Window) {
  const stats = await sql<StatRow[]>`
    select s.id, s.name, s.kind, s.description, last.value as last_value, last.ts as last_point_at
    from stats s
    left join lateral (select ts, value from points p where p.stat_id = s.id order by ts desc limit 1) last on true
    where s.account_id = ${accountId} order by s.name`
  const buckets = await readBucketsMany(sql, stats, w)
  return stats.map((s) => {
    const points = buckets.get(s.id) ?? []
    return {
      id: s.id, name: s.name, kind: s.kind, description: s.description, last_value: s.last_value,
      last_point_at: s.last_point_at?.toISOString() ?? null, summary: summarise(s.kind, points), points,
    }
  })
}
