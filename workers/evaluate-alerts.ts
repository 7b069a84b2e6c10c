// The alert evaluation schedule: one pass over every alert, then the new
// deliveries (and any left in the outbox by a crash) are queued for sending.
import type { JobData } from '../shared/jobs.js'
import { evaluateAlerts, queuedDeliveries } from '../shared/alerts/evaluate.js'
import type { WorkerDeps } from './deps.js'

export async function evaluateAlertsJob(
  deps: WorkerDeps,
  _data: JobData<'evaluate-alerts'>,
  now: Date,
): Promise<{ evaluated: number; queued: number }> {
  const pass = await evaluateAlerts(deps.sql, now)
  const leftover = await queuedDeliveries(deps.sql, new Date(now.getTime() - 60_000))
  const ids = [...new Set([...pass.deliveries, ...leftover])]
  // The job id is the delivery's idempotency key: adding one that exists already is a no-op.
  for (const id of ids) await deps.queues.enqueue('deliver-alert', { delivery_id: id }, { jobId: id })
  if (pass.deliveries.length) deps.log.info('alerts fired', { deliveries: pass.deliveries.length, evaluated: pass.evaluated })
  return { evaluated: pass.evaluated, queued: ids.length }
}
