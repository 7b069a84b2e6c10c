// Dense hourly series for the analyses that compare hours (anomaly detection,
// correlations): the chart read (readBucketsMany) at one-hour buckets, laid
// out one slot per hour. A counter's hour without points is a real 0 once the
// stat has begun; a gauge's is unknown (null), since a gauge that was not
// sampled did not read zero.
import type { Db } from '../db.js'
import type { Kind } from './repo.js'
import { readBucketsMany } from './read.js'

export const HOUR = 3_600

export interface HourlySeries {
  /** Unix seconds of the first slot (aligned to the hour). */
  from: number
  /** One value per hour from `from`: counters sum, gauges mean; null where unknown. */
  values: Array<number | null>
  /** Points per hour (0 where none). */
  counts: number[]
}

/**
 * Hourly series of several stats over [from, to) (both aligned down to the hour, so a
 * `to` of now leaves the incomplete current hour out). Counter hours before the
 * stat's first point (its first non-empty hour in the window, or `since` when the
 * caller knows an earlier start) are null, so "not yet begun" is not read as zero.
 */
export async function readHourly(
  sql: Db,
  stats: Array<{ id: string; kind: Kind; since?: Date }>,
  from: Date,
  to: Date,
): Promise<Map<string, HourlySeries>> {
  const f = Math.floor(from.getTime() / 1000 / HOUR) * HOUR
  const t = Math.floor(to.getTime() / 1000 / HOUR) * HOUR
  const slots = Math.max(0, (t - f) / HOUR)
  const buckets = await readBucketsMany(sql, stats, { requested: 'custom', from: new Date(f * 1000), to: new Date(t * 1000), bucketSeconds: HOUR })
  const out = new Map<string, HourlySeries>()
  for (const s of stats) {
    const values: Array<number | null> = new Array(slots).fill(null)
    const counts: number[] = new Array(slots).fill(0)
    for (const b of buckets.get(s.id) ?? []) {
      const i = (b.t - f) / HOUR
      if (i < 0 || i >= slots) continue
      values[i] = b.value
      counts[i] = b.n
    }
    if (s.kind === 'counter') {
      const firstFilled = values.findIndex((v) => v !== null)
      const sinceSlot = s.since ? Math.ceil((Math.floor(s.since.getTime() / 1000 / HOUR) * HOUR - f) / HOUR) : Infinity
      const start = Math.max(0, Math.min(firstFilled < 0 ? Infinity : firstFilled, sinceSlot))
      for (let i = start; i < slots; i++) if (values[i] === null) values[i] = 0
    }
    out.set(s.id, { from: f, values, counts })
  }
  return out
}
