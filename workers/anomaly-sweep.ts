// The anomaly sweep schedule (docs/decisions.md §11): once per cluster every ANOMALY_SWEEP_INTERVAL_SECONDS.
import type { JobData } from '../shared/jobs.js'
import { sweep, type SweepResult } from '../shared/anomalies/sweep.js'
import type { WorkerDeps } from './deps.js'

export async function anomalySweepJob(deps: WorkerDeps, _data: JobData<'anomaly-sweep'>, now: Date): Promise<SweepResult> {
  const result = await sweep(deps.sql, now, { staleAfterSeconds: deps.config.anomalyStaleAfterSeconds })
  // One line per sweep that scored anything, so an operator sees the detector running (and what it found).
  if (result.scored || result.opened || result.closed) deps.log.info('anomaly sweep', { ...result })
  return result
}
