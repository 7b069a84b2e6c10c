// Deletes sessions that expired or were revoked over a day ago, ended invitations, and audit rows past
// their 400 days (docs/decisions.md §23).
import type { JobData } from '../shared/jobs.js'
import { purgeSessions } from '../shared/auth/sessions.js'
import { purgeAudit } from '../shared/audit/audit.js'
import { purgeInvitations } from '../shared/members/invitations.js'
import type { WorkerDeps } from './deps.js'

export async function purgeSessionsJob(
  deps: WorkerDeps,
  _data: JobData<'purge-sessions'>,
  now: Date,
): Promise<{ deleted: number; invitations: number; audit: number }> {
  return {
    deleted: await purgeSessions(deps.sql, now),
    invitations: await purgeInvitations(deps.sql, now),
    audit: await purgeAudit(deps.sql, now),
  }
}
