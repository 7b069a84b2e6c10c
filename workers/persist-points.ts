// Stores a batch of accepted points, exactly once (see applyBatch).
import type { JobData } from '../shared/jobs.js'
import { applyBatch } from '../shared/points/repo.js'
import type { WorkerDeps } from './deps.js'

export async function persistPointsJob(deps: WorkerDeps, data: JobData<'persist-points'>): Promise<{ stored: number; duplicates: number; applied: boolean }> {
  return applyBatch(deps.sql, data.batch_id, data.points)
}
