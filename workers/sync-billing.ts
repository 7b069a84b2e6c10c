// Applies the plan of a customer's subscription as the provider holds it now (shared/billing/sync.ts).
import type { JobData } from '../shared/jobs.js'
import { syncCustomer, type SyncResult } from '../shared/billing/sync.js'
import type { WorkerDeps } from './deps.js'

export async function syncBillingJob(deps: WorkerDeps, data: JobData<'sync-billing'>, now: Date): Promise<SyncResult> {
  const result = await syncCustomer(deps, data.customer_id, now)
  if ('unknown_customer' in result) deps.log.warn('billing event for a customer no account holds', { customer_id: data.customer_id })
  return result
}
