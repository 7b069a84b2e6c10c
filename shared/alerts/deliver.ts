// Sending one delivery over its alert's channel. Webhooks get the payload of
// docs/decisions.md §I-2.5 with the idempotency, incident and signature headers; Slack an
// incoming-webhook message; e-mail a plain-text mail to a confirmed address.
import { createHmac } from 'node:crypto'
import type { Config } from '../config.js'
import type { Db } from '../db.js'
import { postJson } from './egress.js'
import { isConfirmed, sendMail } from './mail.js'
import { formatInstant } from '../time/zones.js'
import type { AlertRow, Delivery } from './repo.js'
import type { DeliveryPayload } from './schema.js'

/** `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (docs/decisions.md §8). */
export function signature(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`
}

/**
 * The stat's page in the app, where a signed-in reader lands on its chart (never a JSON route, which a browser
 * opens without its key). PUBLIC_URL in production; elsewhere the address `npm run dev` prints, so that the link
 * is on the same host name as the session cookie.
 */
export function statLink(config: Pick<Config, 'publicUrl' | 'port'>, name: string): string {
  return `${appBase(config)}/stats/${encodeURIComponent(name)}`
}

const appBase = (config: Pick<Config, 'publicUrl' | 'port'>) => config.publicUrl?.replace(/\/+$/, '') ?? `http://127.0.0.1:${config.port}`

/** The alert's own page, where it is muted, tested and changed (the mail linked to the stat only). */
export function alertLink(config: Pick<Config, 'publicUrl' | 'port'>, id: string): string {
  return `${appBase(config)}/alerts/${encodeURIComponent(id)}`
}

/** The account's clock (its time zone, null: none set), for the times a mail or a Slack message states. */
async function zoneOf(sql: Db, accountId: string): Promise<string | null> {
  const [row] = await sql<{ time_zone: string | null }[]>`select time_zone from accounts where id = ${accountId}`
  return row?.time_zone ?? null
}

/** A failed attempt, with the receiver's HTTP status when it answered (the alert's history shows it). */
export class DeliveryFailed extends Error {
  constructor(
    message: string,
    readonly statusCode: number | null,
  ) {
    super(message)
  }
}

/** Posts once; returns the receiver's status (2xx), throws DeliveryFailed with it otherwise. */
async function post(config: Config, url: string, body: string, headers: Record<string, string>): Promise<number> {
  const res = await postJson(
    url,
    body,
    { 'content-type': 'application/json', 'user-agent': 'metrics-alerts/1', ...headers },
    { allowPrivate: config.webhookAllowPrivate, allowLoopback: config.webhookAllowLoopback },
  )
  if (res.status < 200 || res.status >= 300) throw new DeliveryFailed(`receiver answered HTTP ${res.status}`, res.status)
  return res.status
}

const HEADLINE = {
  fired: ['FIRING', ':rotating_light:', 'Alert firing'],
  resolved: ['RESOLVED', ':white_check_mark:', 'Resolved'],
  test: ['TEST', ':test_tube:', 'Test'],
} as const

/**
 * Sends a delivery once; returns the receiver's HTTP status (null for e-mail, which has none). Throws on any
 * failure so the job is retried.
 */
export async function send(config: Config, sql: Db, alert: AlertRow, delivery: Delivery, now: Date): Promise<number | null> {
  const p = delivery.payload as DeliveryPayload
  const [subjectTag, icon, title] = HEADLINE[p.event]
  switch (alert.channel) {
    case 'webhook': {
      const body = JSON.stringify(p)
      return post(config, alert.channel_config.webhook_url!, body, {
        'X-Service-Idempotency-Key': p.idempotency_key,
        'X-Service-Incident-Key': p.incident_key,
        'X-Service-Signature': signature(alert.signing_secret, body, Math.floor(now.getTime() / 1000)),
      })
    }
    case 'slack': {
      const at = formatInstant(new Date(p.triggered_at), await zoneOf(sql, alert.account_id))
      const text = `${icon} *${title}*: ${p.message}\n<${statLink(config, p.stat_name)}|${p.stat_name}> · ${p.condition} ${p.threshold} · ${at} · <${alertLink(config, alert.id)}|mute or change the alert>`
      return post(config, alert.channel_config.slack_webhook_url!, JSON.stringify({ text }), {})
    }
    case 'email': {
      const to = alert.channel_config.email!
      // Double opt-in is checked again at send time: a confirmation can only ever be added, but be strict.
      if (!(await isConfirmed(sql, alert.account_id, to))) throw new Error('address not confirmed')
      // "At:" on the account's clock, as its pages write times; the alert's page is where it is muted.
      const at = formatInstant(new Date(p.triggered_at), await zoneOf(sql, alert.account_id))
      await sendMail(config, {
        to,
        subject: `[${subjectTag}] ${p.stat_name}`,
        text:
          `${p.message}\n\nCondition: ${p.condition} ${p.threshold}\nObserved: ${p.observed_value ?? 'no data'}\nAt: ${at}\nIncident: ${p.incident_key}\n\n` +
          `The stat: ${statLink(config, p.stat_name)}\nThe alert (mute, test, change, history): ${alertLink(config, alert.id)}\n`,
      })
      return null
    }
    case 'pagerduty':
      return post(config, alert.channel_config.pagerduty_url ?? PAGERDUTY_URL, JSON.stringify(pagerDutyEvent(alert, p, now)), {})
    case 'opsgenie': {
      const base = (alert.channel_config.opsgenie_url ?? OPSGENIE_URL).replace(/\/+$/, '')
      const auth = { authorization: `GenieKey ${alert.channel_config.opsgenie_api_key}` }
      // Closed by alias (the incident key): a retried close, or one for an alert already closed, changes nothing there.
      if (p.event === 'resolved')
        return post(
          config,
          `${base}/v2/alerts/${encodeURIComponent(p.incident_key)}/close?identifierType=alias`,
          JSON.stringify({ source: 'metrics', note: p.message }),
          auth,
        )
      return post(config, `${base}/v2/alerts`, JSON.stringify(opsgenieAlert(config, alert, p)), auth)
    }
  }
}

export const PAGERDUTY_URL = 'https://events.pagerduty.com/v2/enqueue'
export const OPSGENIE_URL = 'https://api.opsgenie.com'

/**
 * A PagerDuty Events API v2 event: trigger on fire (and test), resolve on recovery, both with the incident key
 * as dedup_key, so a retried trigger updates the one open PagerDuty alert and the resolve closes it.
 */
export function pagerDutyEvent(alert: AlertRow, p: DeliveryPayload, now: Date) {
  const base = { routing_key: alert.channel_config.pagerduty_routing_key, dedup_key: p.incident_key.slice(0, 255) }
  if (p.event === 'resolved') return { ...base, event_action: 'resolve' }
  return {
    ...base,
    event_action: 'trigger',
    payload: {
      summary: p.message.slice(0, 1024),
      source: `metrics: ${p.stat_name}`.slice(0, 255),
      severity: p.event === 'test' ? 'info' : 'critical',
      timestamp: new Date(p.triggered_at ?? now).toISOString(),
      custom_details: { stat: p.stat_name, condition: p.condition, threshold: p.threshold, observed: p.observed_value ?? null },
    },
    client: 'Metrics',
  }
}

/** An Opsgenie alert: created with the incident key as alias (Opsgenie counts repeats of an open alias, not new alerts). */
export function opsgenieAlert(config: Pick<Config, 'publicUrl' | 'port'>, alert: AlertRow, p: DeliveryPayload) {
  return {
    message: p.message.slice(0, 130),
    alias: p.incident_key.slice(0, 512),
    description: `${p.message}\n\nThe stat: ${statLink(config, p.stat_name)}\nThe alert: ${alertLink(config, alert.id)}`.slice(0, 15000),
    details: { stat: p.stat_name, condition: p.condition, threshold: String(p.threshold), observed: String(p.observed_value ?? 'no data') },
    source: 'metrics',
    priority: p.event === 'test' ? 'P5' : 'P2',
    tags: ['metrics'],
  }
}
