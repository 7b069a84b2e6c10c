// Runs one import (shared/imports/run.ts). When the last attempt fails, the
// import is marked failed with the reason; what was stored stays, batch by
// batch, and a later run of the same import continues without doubling.
import type { JobData } from '../shared/jobs.js'
import { markFailed } from '../shared/imports/repo.js'
import { runImport } from '../shared/imports/run.js'
import type { Attempt, WorkerDeps } from './deps.js'

export async function importPointsJob(deps: WorkerDeps, data: JobData<'import-points'>, _now: Date, attempt: Attempt) {
  try {
    const result = await runImport(deps.sql, data.import_id)
    deps.log.info('import completed', { import_id: data.import_id, ...result })
    return result
  } catch (err) {
    const message = `could not store the points: ${(err as Error).message} (attempt ${attempt.number}${attempt.final ? ', the last' : ', will retry'})`
    deps.log.warn('import failed', { import_id: data.import_id, attempt: attempt.number, error: (err as Error).message })
    if (attempt.final) await markFailed(deps.sql, data.import_id, message)
    throw err
  }
}
