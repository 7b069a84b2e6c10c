// Packs hot points older than the hot window into per-stat blocks (shared/points/compaction.ts).
import type { JobData } from '../shared/jobs.js'
import { compactPoints, type CompactionResult } from '../shared/points/compaction.js'
import type { WorkerDeps } from './deps.js'

export async function compactPointsJob(deps: WorkerDeps, _data: JobData<'compact-points'>, now: Date): Promise<CompactionResult> {
  const t0 = Date.now()
  const result = await compactPoints(deps.sql, now, { hotWindowMinutes: deps.config.hotWindowMinutes })
  if (result.points) deps.log.info('points compacted', { ...result, ms: Date.now() - t0 })
  return result
}
