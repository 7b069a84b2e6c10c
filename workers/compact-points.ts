// Packs hot points older than the hot window into per-stat blocks (shared/points/compaction.ts).
import type { JobData } from '../shared/jobs.js'
import { type CompactionResult, compactionPasses } from '../shared/points/compaction.js'
import type { WorkerDeps } from './deps.js'

/** This process's passes: they remember the edge they last checked at (compactionPasses). */
const pass = compactionPasses()

export async function compactPointsJob(deps: WorkerDeps, _data: JobData<'compact-points'>, now: Date): Promise<CompactionResult> {
  const t0 = Date.now()
  const result = await pass(deps.sql, now, { hotWindowMinutes: deps.config.hotWindowMinutes })
  if (result.points) deps.log.info('points compacted', { ...result, ms: Date.now() - t0 })
  return result
}
