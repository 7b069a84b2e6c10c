// Creating and deleting alerts: the rules around them that are more than one query (plan limits, the
// channel's target, the e-mail double opt-in, queued deliveries). Changing one is patch-and-test.ts.
import type { Config } from '../config.js'
import type { Sql } from '../db.js'
import { AppError, forbidden, invalid } from '../errors.js'
import type { Account } from '../accounts/repo.js'
import { planOf } from '../plans.js'
import type { Queues } from '../queues.js'
import { checkTarget, EgressRefused } from './egress.js'
import { canSendMail, isConfirmed, mailConfirmation } from './mail.js'
import { deleteAlert, insertAlert, type AlertRow } from './repo.js'
import type { CreateAlertBody } from './schema.js'
import { findStat } from '../stats/repo.js'

export interface AlertDeps {
  config: Config
  sql: Sql
  queues: Queues
}

/**
 * What creation and a PATCH check of a channel's target: a webhook, Slack, PagerDuty or Opsgenie URL must pass the egress rules, and
 * an e-mail address needs a way to send mail.
 */
export async function checkChannelTarget(config: Config, channel: CreateAlertBody['channel_config']): Promise<void> {
  const target = channel.webhook_url ?? channel.slack_webhook_url ?? channel.pagerduty_url ?? channel.opsgenie_url
  if (target) {
    try {
      await checkTarget(target, { allowPrivate: config.webhookAllowPrivate, allowLoopback: config.webhookAllowLoopback })
    } catch (err) {
      if (err instanceof EgressRefused) throw invalid('webhook_refused', `channel_config: ${err.message}`)
      throw err
    }
  }
  if (channel.email && !canSendMail(config))
    throw invalid('email_unavailable', 'e-mail alerts are not available on this deployment: set SMTP_URL')
}

/** Validates the channel, applies the plan's alert limit and, for e-mail, starts the double opt-in. */
export async function createAlert(deps: AlertDeps, account: Account, body: CreateAlertBody, baseUrl: string): Promise<AlertRow> {
  const { config, sql } = deps
  const plan = planOf(account.plan)
  if (body.condition_type === 'anomaly' && !plan.anomalyDetection) {
    throw forbidden(
      'plan_lacks_anomaly_detection',
      `the ${plan.name} plan does not include anomaly detection, so an anomaly alert would never fire; starter, pro and business do`,
    )
  }
  if (body.aggregation !== 'avg' && (await findStat(sql, account.id, body.stat_name))?.kind === 'counter') {
    // A stat not created yet may still become a counter: its alert then has no value, and stays as it is.
    throw invalid(
      'percentile_on_counter',
      `aggregation ${body.aggregation}: "${body.stat_name}" is a counter, and only gauges have percentiles (a counter's minute is a sum): use aggregation avg`,
    )
  }
  await checkChannelTarget(config, body.channel_config)
  const email = body.channel_config.email
  const confirmed = email ? await isConfirmed(sql, account.id, email) : true
  const alert = await insertAlert(sql, account.id, body, confirmed ? 'ok' : 'pending_confirmation', plan.alerts)
  if (!alert) throw new AppError('quota', 'alert_limit', `plan limit reached: the ${plan.name} plan allows at most ${plan.alerts} alerts`)
  if (email && !confirmed) {
    try {
      await mailConfirmation(config, sql, account.id, email, body.stat_name, baseUrl)
    } catch (err) {
      await deleteAlert(sql, account.id, alert.id) // throttled, the mail could not go, or the database failed: nothing stays
      throw err
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
