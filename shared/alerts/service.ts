// Creating and deleting alerts: the rules around them that are more than one query.
import type { Config } from '../config.js'
import type { Sql } from '../db.js'
import { AppError, forbidden, invalid, unavailable } from '../errors.js'
import type { Account } from '../accounts/repo.js'
import { planOf } from '../plans.js'
import type { Queues } from '../queues.js'
import { checkTarget, EgressRefused } from './egress.js'
import { cancelConfirmation, canSendMail, isConfirmed, sendMail, startConfirmation, type Confirmation } from './mail.js'
import { deleteAlert, insertAlert, type AlertRow } from './repo.js'
import type { CreateAlertBody } from './schema.js'
import { findStat } from '../stats/repo.js'

export interface AlertDeps {
  config: Config
  sql: Sql
  queues: Queues
}

/** Validates the channel, applies the plan's alert limit and, for e-mail, starts the double opt-in. */
export async function createAlert(deps: AlertDeps, account: Account, body: CreateAlertBody, baseUrl: string): Promise<AlertRow> {
  const { config, sql } = deps
  const plan = planOf(account.plan)
  if (body.condition_type === 'anomaly' && !plan.anomalyDetection) {
    throw forbidden('plan_lacks_anomaly_detection', `the ${plan.name} plan does not include anomaly detection, so an anomaly alert would never fire; starter, pro and business do`)
  }
  if (body.aggregation !== 'avg' && (await findStat(sql, account.id, body.stat_name))?.kind === 'counter') {
    // A stat not created yet may still become a counter: its alert then has no value, and stays as it is.
    throw invalid('percentile_on_counter', `aggregation ${body.aggregation}: "${body.stat_name}" is a counter, and only gauges have percentiles (a counter's minute is a sum): use aggregation avg`)
  }
  const target = body.channel_config.webhook_url ?? body.channel_config.slack_webhook_url
  if (target) {
    try {
      await checkTarget(target, { allowPrivate: config.webhookAllowPrivate, allowLoopback: config.webhookAllowLoopback })
    } catch (err) {
      if (err instanceof EgressRefused) throw invalid('webhook_refused', `channel_config: ${err.message}`)
      throw err
    }
  }
  const email = body.channel_config.email
  if (email && !canSendMail(config)) throw invalid('email_unavailable', 'e-mail alerts are not available on this deployment: set SMTP_URL')
  const confirmed = email ? await isConfirmed(sql, account.id, email) : true
  const alert = await insertAlert(sql, account.id, body, confirmed ? 'ok' : 'pending_confirmation', plan.alerts)
  if (!alert) throw new AppError('quota', 'alert_limit', `plan limit reached: the ${plan.name} plan allows at most ${plan.alerts} alerts`)
  if (email && !confirmed) {
    let confirmation: Confirmation
    try {
      confirmation = await startConfirmation(sql, account.id, email)
    } catch (err) {
      await deleteAlert(sql, account.id, alert.id) // throttled (or the database failed): nothing stays
      throw err
    }
    // Pending: the mail sent earlier arms this alert too; the address is not mailed again.
    if (confirmation.status === 'new') {
      const link = `${baseUrl}/api/v1/email/confirm?token=${confirmation.token}`
      try {
        await sendMail(config, {
          to: email,
          subject: 'Confirm alert e-mails',
          text: `An account asked to send alerts for "${body.stat_name}" to this address.\n\nConfirm with this link:\n${link}\n\nIgnore this mail and nothing will be sent.`,
          link,
        })
      } catch (err) {
        await deleteAlert(sql, account.id, alert.id)
        await cancelConfirmation(sql, account.id, confirmation.token).catch(() => {})
        throw unavailable(`could not send the confirmation e-mail: ${(err as Error).message}`)
      }
    }
  }
  return alert
}

/** Deletes an alert and drops its queued deliveries, so no resolve is ever sent for it. */
export async function removeAlert(deps: AlertDeps, accountId: string, id: string): Promise<boolean> {
  const queued = await deleteAlert(deps.sql, accountId, id)
  if (queued === null) return false
  const queue = deps.queues.get('deliver')
  // A job already running finds its delivery row gone and drops it.
  await Promise.all(queued.map((jobId) => queue.remove(jobId).catch(() => 0)))
  return true
}
