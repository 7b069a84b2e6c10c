// Changing an alert after it was created and trying it (docs/decisions.md §18): PATCH and the test delivery.
// Creating and deleting one is create-delete.ts.
import { randomUUID } from 'node:crypto'
import type { Account } from '../accounts/repo.js'
import { AppError, conflict, invalid, notFound } from '../errors.js'
import { recordEvents } from './history.js'
import { isConfirmed, mailConfirmation } from './mail.js'
import { findAlert, type AlertRow } from './repo.js'
import { CHANNEL_FIELDS, channelReads, THRESHOLD_CONDITIONS, type DeliveryPayload, type UpdateAlertBody } from './schema.js'
import { checkChannelTarget, type AlertDeps } from './create-delete.js'

async function ownAlert(deps: AlertDeps, accountId: string, id: string): Promise<AlertRow> {
  const alert = await findAlert(deps.sql, id)
  if (!alert || alert.account_id !== accountId) throw notFound('alert', 'alert_not_found')
  return alert
}

/** The checks the body cannot make alone: they depend on the alert's condition and channel. */
async function checkChange(deps: AlertDeps, alert: AlertRow, body: UpdateAlertBody): Promise<void> {
  if (body.on_no_data && body.on_no_data !== 'keep' && !THRESHOLD_CONDITIONS.includes(alert.condition_type)) {
    throw invalid(
      'validation_failed',
      `body.on_no_data: applies to threshold conditions only (${THRESHOLD_CONDITIONS.join(', ')}), not ${alert.condition_type}`,
      { errors: [{ path: 'body.on_no_data', message: `applies to threshold conditions only, not ${alert.condition_type}` }] },
    )
  }
  const config = body.channel_config
  if (!config) return
  const field = CHANNEL_FIELDS[alert.channel].required
  for (const [key, value] of Object.entries(config)) {
    if (!channelReads(alert.channel, key) && value !== undefined) {
      throw invalid('validation_failed', `body.channel_config.${key}: not used by channel ${alert.channel}`, {
        errors: [{ path: `body.channel_config.${key}`, message: `not used by channel ${alert.channel}` }],
      })
    }
  }
  if (!config[field])
    throw invalid('validation_failed', `body.channel_config.${field}: required for channel ${alert.channel}`, {
      errors: [{ path: `body.channel_config.${field}`, message: `required for channel ${alert.channel}` }],
    })
  await checkChannelTarget(deps.config, config)
}

/**
 * A new e-mail address must confirm first (the double opt-in of creation): mails the link unless the address is
 * confirmed or already waiting; returns whether it is confirmed. Throttled like creation; nothing is stored when
 * the mail cannot go.
 */
async function optIn(deps: AlertDeps, account: Account, alert: AlertRow, email: string, baseUrl: string): Promise<boolean> {
  if (await isConfirmed(deps.sql, account.id, email)) return true
  const confirmation = await mailConfirmation(deps.config, deps.sql, account.id, email, alert.stat_name, baseUrl)
  if (confirmation.status === 'confirmed') return true
  return false
}

/**
 * What a PATCH changed, in words for the alert's history (a changed threshold left no trace):
 * "threshold 100 → 250", "window 5 → 15 min". The mute has its own "muted" line.
 */
function changedFields(before: AlertRow, after: AlertRow): string[] {
  const out: string[] = []
  const field = CHANNEL_FIELDS[before.channel].required
  const was = (label: string, a: unknown, b: unknown, unit = '') => {
    if (a !== b) out.push(`${label} ${String(a)} → ${String(b)}${unit}`)
  }
  was('threshold', before.threshold, after.threshold)
  was('window', before.window_minutes, after.window_minutes, ' min')
  was('side', before.direction, after.direction)
  was('cooldown', before.cooldown_minutes, after.cooldown_minutes, ' min')
  was('when the stat goes quiet', before.on_no_data, after.on_no_data)
  // Named, not shown: a Slack or webhook URL can carry its own secret.
  if (before.channel_config[field] !== after.channel_config[field])
    out.push(`${field === 'email' ? 'address' : field.endsWith('key') ? 'key' : 'URL'} changed`)
  return out
}

/** PATCH: changes the given fields; a changed e-mail address goes back to pending_confirmation until confirmed. */
export async function updateAlert(
  deps: AlertDeps,
  account: Account,
  id: string,
  body: UpdateAlertBody,
  baseUrl: string,
): Promise<AlertRow> {
  const alert = await ownAlert(deps, account.id, id)
  await checkChange(deps, alert, body)
  const email = body.channel_config?.email
  const newAddress = email !== undefined && email.toLowerCase() !== alert.channel_config.email?.toLowerCase()
  const confirmed = newAddress ? await optIn(deps, account, alert, email, baseUrl) : null
  const set = {
    ...(body.threshold !== undefined ? { threshold: body.threshold } : {}),
    ...(body.window_minutes !== undefined ? { window_minutes: body.window_minutes, window_minutes_set: true } : {}),
    ...(body.direction !== undefined ? { direction: body.direction } : {}),
    ...(body.cooldown_minutes !== undefined ? { cooldown_minutes: body.cooldown_minutes } : {}),
    ...(body.on_no_data !== undefined ? { on_no_data: body.on_no_data } : {}),
    ...(body.muted_until !== undefined ? { muted_until: body.muted_until === null ? null : new Date(body.muted_until) } : {}),
  }
  const { sql } = deps
  const row = (await sql.begin(async (tx) => {
    const [updated] = await tx<AlertRow[]>`
      update alerts set ${Object.keys(set).length ? tx(set) : tx`threshold = threshold`}
        ${body.channel_config ? tx`, channel_config = ${tx.json(body.channel_config)}` : tx``}
        -- An unconfirmed address starts over (its incident is forgotten: nothing may be mailed to it); a confirmed one arms a pending alert.
        ${confirmed === false ? tx`, state = 'pending_confirmation', incident_id = null, incident_notified = false, incident_muted = false, incident_no_data = false, resolve_withheld = null, condition_since = null` : tx``}
        ${confirmed === true ? tx`, state = case when state = 'pending_confirmation' then 'ok' else state end` : tx``}
      where id = ${id} and account_id = ${account.id}
      returning *`
    if (!updated) return null
    const changes = changedFields(alert, updated)
    if (changes.length) {
      await recordEvents(tx, [
        { alertId: id, at: new Date(), event: 'changed', observedValue: null, deliveryId: null, detail: changes.join('; ') },
      ])
    }
    if (body.muted_until !== undefined) {
      const until = updated.muted_until
      await recordEvents(tx, [
        {
          alertId: id,
          at: new Date(),
          event: 'muted',
          observedValue: null,
          deliveryId: null,
          detail: until && until.getTime() > Date.now() ? `muted until ${until.toISOString()}` : 'mute lifted',
        },
      ])
    }
    return updated
  })) as AlertRow | null
  if (!row) throw notFound('alert', 'alert_not_found') // deleted meanwhile
  return row
}

/**
 * Queues one test delivery through the alert's channel: the payload of docs/decisions.md §I-2.5 with `event: "test"`, the
 * alert's current status, its own idempotency and incident keys, signed like any delivery. Returns its id.
 */
export async function sendTest(deps: AlertDeps, accountId: string, id: string): Promise<string> {
  const alert = await ownAlert(deps, accountId, id)
  if (alert.state === 'pending_confirmation') {
    throw conflict(
      'alert_pending_confirmation',
      "the alert's e-mail address is not confirmed yet: click the link in the confirmation mail first; nothing was sent",
    )
  }
  const test = randomUUID()
  const now = new Date()
  const status = alert.state === 'firing' ? 'firing' : 'resolved'
  const payload: DeliveryPayload = {
    alert_id: alert.id,
    event: 'test',
    status,
    stat_name: alert.stat_name,
    observed_value: alert.last_value,
    condition: alert.condition_type,
    threshold: alert.threshold,
    triggered_at: now.toISOString(),
    message: `${alert.stat_name}: test delivery, sent on request (the alert is ${status === 'firing' ? 'firing' : 'not firing'})`,
    // Also the BullMQ job id, which may not contain ':'.
    idempotency_key: `${alert.id}.test-${test}`,
    incident_key: `${alert.id}.test-${test}`,
  }
  await deps.sql.begin(async (tx) => {
    await tx`insert into alert_deliveries (id, alert_id, incident_id, event, payload) values (${payload.idempotency_key}, ${alert.id}, ${test}, 'test', ${tx.json(payload)})`
    await recordEvents(tx, [
      { alertId: alert.id, at: now, event: 'test', observedValue: alert.last_value, detail: null, deliveryId: payload.idempotency_key },
    ])
  })
  // A few tries, not the three hours a real alert gets: someone is waiting on the answer. If Redis is down the
  // outbox sweep of the evaluation schedule queues it later.
  await deps.queues
    .enqueue('deliver-alert', { delivery_id: payload.idempotency_key }, { jobId: payload.idempotency_key, attempts: 3 })
    .catch((err: Error) => {
      throw new AppError(
        'unavailable',
        'unavailable',
        `the test was recorded but could not be queued yet (${err.message}); it is sent within a minute`,
      )
    })
  return payload.idempotency_key
}
