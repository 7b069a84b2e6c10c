// Folds recently persisted points into the 1 m / 1 h / 1 d rollups. Runs on a
// schedule, once per cluster; loops while a pass was full so a backlog clears in one run.
import type { JobData } from '../shared/jobs.js'
import { refreshRollups } from '../shared/points/rollups.js'
import type { WorkerDeps } from './deps.js'

const PASS_ROWS = 50_000
const MAX_PASSES = 20

export async function refreshRollupsJob(deps: WorkerDeps, _data: JobData<'refresh-rollups'>): Promise<{ rows: number }> {
  let rows = 0
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const r = await refreshRollups(deps.sql, PASS_ROWS)
    rows += r.rows
    if (r.rows < PASS_ROWS) break
  }
  return { rows }
}
