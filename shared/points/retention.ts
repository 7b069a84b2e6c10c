// Retention: points older than the account's plan keeps are deleted, per plan
// (plans differ, so no single time cut fits every account). Reads clamp to
// the same limit (shared/stats/ranges.ts clampToRetention, export's window),
// so what a reader sees does not depend on when this job last ran.
import type { Sql } from '../db.js'
import { PLANS } from '../plans.js'
import { usesTimescale } from './storage.js'

const DAY_MS = 86_400_000
const ROLLUPS = [['rollups_1m', 60], ['rollups_1h', 3_600], ['rollups_1d', 86_400]] as const
const SKETCHES = [['sketches_1h', 3_600], ['sketches_6h', 21_600], ['sketches_1d', 86_400]] as const

export interface RetentionResult {
  points: number
  rollups: number
}

export async function enforceRetention(sql: Sql, now: Date): Promise<RetentionResult> {
  const timescale = await usesTimescale(sql)
  const out: RetentionResult = { points: 0, rollups: 0 }
  for (const plan of Object.values(PLANS)) {
    const cutoff = new Date(now.getTime() - plan.retentionDays * DAY_MS)
    // By (stat_id, ts), the points index; run hourly, each pass deletes about an hour's worth per stat.
    const ofPlan = sql`select s.id from stats s join accounts a on a.id = s.account_id where a.plan = ${plan.name}`
    const [points] = await sql<{ n: number }[]>`
      with d as (delete from points where ts < ${cutoff} and stat_id in (${ofPlan}) returning 1) select count(*)::int as n from d`
    out.points += points.n
    // TimescaleDB's rollups are continuous aggregates: deleting the points invalidates them and the next refresh
    // re-materializes them; whole chunks past the longest plan go by its retention policy (sql/0003).
    // Sketches are tables on both paths (sql/0023): the same whole-bucket rule.
    for (const [table, seconds] of timescale ? SKETCHES : [...ROLLUPS, ...SKETCHES]) {
      // Only buckets wholly before the cutoff: a straddling bucket still holds points inside retention.
      const [rows] = await sql<{ n: number }[]>`
        with d as (delete from ${sql(table)} where bucket < ${new Date(cutoff.getTime() - seconds * 1000)} and stat_id in (${ofPlan}) returning 1)
        select count(*)::int as n from d`
      out.rollups += rows.n
    }
  }
  return out
}
