// Folds recently persisted points into the 1 m / 1 h / 1 d rollups, and starts what follows from them: the
// anomaly sweep's replay of history written behind it, the quantile sketches of the hours they filled, and the
// day blobs of closed days.
// Runs on a schedule, once per cluster; loops while a pass was full so a backlog clears in one run.
import { markFoldedForScoring } from '../shared/anomalies/sweep.js'
import type { Sql } from '../shared/db.js'
import type { JobData } from '../shared/jobs.js'
import { buildRollupDays, foldRollups } from '../shared/points/rollups.js'
import { markDirty, refreshSketches } from '../shared/points/sketches.js'
import type { WorkerDeps } from './deps.js'

const PASS_ROWS = 50_000
const MAX_PASSES = 20

/** One pass of the refresh, as its steps. */
export async function refreshRollups(sql: Sql, limit = 200_000): Promise<{ rows: number; stats: number }> {
  // 1. Claim up to `limit` pending aggregates and fold them into the rollups. In the same statement, mark
  //    2. the stats whose scored history they changed, for the anomaly sweep to replay, and
  //    3. the gauge hours they touched, whose quantile sketches are now stale.
  const folded = await foldRollups(sql, limit, [markFoldedForScoring, markDirty])
  // 4. Rebuild the sketches of the marked hours that are complete.
  await refreshSketches(sql)
  // 5. Pack a batch of closed days' five-minute rollups into their day blobs (sql/0050): the days writes touched,
  //    and an existing install's history a batch a pass.
  await buildRollupDays(sql)
  return folded
}

export async function refreshRollupsJob(deps: WorkerDeps, _data: JobData<'refresh-rollups'>): Promise<{ rows: number }> {
  let rows = 0
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const r = await refreshRollups(deps.sql, PASS_ROWS)
    rows += r.rows
    if (r.rows < PASS_ROWS) break
  }
  return { rows }
}
