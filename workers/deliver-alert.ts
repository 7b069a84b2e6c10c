// Sends one alert delivery. Retried with backoff by BullMQ; the last failed
// attempt is recorded on the delivery and shown on the alert.
import { findAlert, findDelivery, markDelivered, recordAttemptFailure } from '../shared/alerts/repo.js'
import { DeliveryFailed, send } from '../shared/alerts/deliver.js'
import type { JobData } from '../shared/jobs.js'
import type { Attempt, WorkerDeps } from './deps.js'

export async function deliverAlertJob(
  deps: WorkerDeps,
  data: JobData<'deliver-alert'>,
  now: Date,
  attempt: Attempt,
): Promise<{ status: string }> {
  const delivery = await findDelivery(deps.sql, data.delivery_id)
  // Gone with its alert (deleted): dropped, never sent.
  if (!delivery) return { status: 'dropped' }
  if (delivery.status !== 'queued') return { status: delivery.status }
  const alert = await findAlert(deps.sql, delivery.alert_id)
  if (!alert) return { status: 'dropped' }
  let statusCode: number | null
  try {
    statusCode = await send(deps.config, deps.sql, alert, delivery, now)
  } catch (err) {
    await recordAttemptFailure(
      deps.sql,
      delivery.id,
      (err as Error).message,
      attempt.final,
      err instanceof DeliveryFailed ? err.statusCode : null,
    )
    // The target itself is not logged: a Slack or webhook URL can be a credential.
    deps.log.warn(attempt.final ? 'alert delivery failed, giving up' : 'alert delivery failed, will retry', {
      alert_id: alert.id,
      stat: alert.stat_name,
      channel: alert.channel,
      attempt: attempt.number,
      error: (err as Error).message,
    })
    throw err
  }
  await markDelivered(deps.sql, delivery.id, statusCode)
  deps.log.info('alert delivered', { alert_id: alert.id, stat: alert.stat_name, channel: alert.channel, attempt: attempt.number })
  return { status: 'delivered' }
}
