// Deletes sessions that expired or were revoked over a day ago.
import type { JobData } from '../shared/jobs.js'
import { purgeSessions } from '../shared/auth/sessions.js'
import type { WorkerDeps } from './deps.js'

export async function purgeSessionsJob(deps: WorkerDeps, _data: JobData<'purge-sessions'>, now: Date): Promise<{ deleted: number }> {
  return { deleted: await purgeSessions(deps.sql, now) }
}
