// Deletes points (and plain-PostgreSQL rollups) older than each account's plan retention.
import type { JobData } from '../shared/jobs.js'
import { enforceRetention, type RetentionResult } from '../shared/points/retention.js'
import type { WorkerDeps } from './deps.js'

export async function enforceRetentionJob(deps: WorkerDeps, _data: JobData<'enforce-retention'>, now: Date): Promise<RetentionResult> {
  const result = await enforceRetention(deps.sql, now)
  if (result.points || result.rollups) deps.log.info('retention enforced', { ...result })
  return result
}
