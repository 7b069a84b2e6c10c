// One alert (docs/decisions.md §18): mute it (1 hour, 1 day or until a chosen time), send a test through
// its channel, change it, and read its history (every fire, resolve, suppression, mute and test with each
// delivery attempt and the receiver's answer).
import type { CHANNEL_FIELDS } from '../../../shared/alerts/schema.js'
import { api, fieldErrors, pageData } from './lib/api.js'
import { instantInZone, ZONE } from './lib/clock.js'
import { age, num, when } from './lib/format.js'
import { usePoll } from './lib/poll.js'
import { Badge, Empty, ErrorNotice, Field, html, Loading, mount, useState } from './lib/ui.js'

interface Alert {
  id: string
  stat_name: string
  condition_type: string
  threshold: number
  window_minutes: number
  direction: 'above' | 'below'
  aggregation: string
  channel: 'webhook' | 'slack' | 'email' | 'pagerduty' | 'opsgenie'
  channel_config: Record<string, string>
  cooldown_minutes: number
  state: string
  last_value: number | null
  last_evaluated_at: string | null
  muted_until: string | null
  on_no_data: 'keep' | 'resolve' | 'alert'
  no_data_minutes: number
  /** An alert per group (docs/decisions.md §24): its filter, its tag, and each group's state. */
  filter?: Record<string, string> | null
  group_by?: string | null
  groups?: Array<{ tags: Record<string, string>; state: string; last_value: number | null; last_evaluated_at: string | null }>
}
interface Attempt {
  attempt: number
  at: string
  status_code: number | null
  error: string | null
}
interface AlertEvent {
  at: string
  event: string
  observed_value: number | null
  detail: string | null
  delivery_status: string | null
  deliveries: Attempt[]
}

const THRESHOLD = ['above', 'below', 'pct_change', 'sustained']
const FIELD = {
  webhook: ['webhook_url', 'Webhook URL'],
  slack: ['slack_webhook_url', 'Slack incoming-webhook URL'],
  email: ['email', 'E-mail address'],
  pagerduty: ['pagerduty_routing_key', 'PagerDuty routing key'],
  opsgenie: ['opsgenie_api_key', 'Opsgenie API key'],
} as const
/**
 * The optional channel_config fields each channel reads besides its FIELD, kept on a change: the API's own table
 * (CHANNEL_FIELDS) by type only, so that the page does not bundle the schema.
 */
const OPTIONAL: { [C in Alert['channel']]: (typeof CHANNEL_FIELDS)[C]['optional'] } = {
  webhook: [],
  slack: [],
  email: [],
  pagerduty: ['pagerduty_url'],
  opsgenie: ['opsgenie_url'],
}
const keptConfig = (a: Alert) =>
  Object.fromEntries((OPTIONAL[a.channel] as readonly string[]).flatMap((k) => (a.channel_config[k] ? [[k, a.channel_config[k]]] : [])))
/** Where a PagerDuty or Opsgenie alert with an endpoint of its own (set through the API) delivers. */
const endpointHint = (a: Alert) => {
  const url = Object.values(keptConfig(a))[0]
  return url ? `Delivered to ${url} (set through the API, kept on a change).` : undefined
}
const NO_DATA = { keep: 'Keep its state', resolve: 'Resolve it', alert: 'Fire' }
const id = pageData.alert ?? ''
const isMuted = (a: Alert) => a.muted_until !== null && Date.parse(a.muted_until) > Date.now()

/**
 * What the window does for this alert, as its field's label; null where it does nothing of its own (above and
 * below on the last minute's value), where only "when the stat goes quiet" uses it (the field
 * said 5 there while its hint said 60 min, and changing it changed nothing the hint described).
 */
function windowRole(a: Alert): string | null {
  if (a.condition_type === 'heartbeat' || a.condition_type === 'missing_data') return 'Minutes without a point before it fires'
  if (a.condition_type === 'pct_change') return 'Compare with the value this many minutes ago'
  if (a.condition_type === 'sustained')
    return a.aggregation !== 'avg' ? `Minutes the ${a.aggregation} is taken over, and must hold` : 'For how many minutes it must hold'
  if (a.aggregation && a.aggregation !== 'avg') return `Minutes the ${a.aggregation} is taken over`
  return null
}

/** The history's details name instants in ISO 8601 UTC (the API's form): on the page, the account's clock. */
const inZoneWords = (text: string) => text.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, (iso) => when(iso))

/** A datetime-local value (the person's own clock) as an ISO instant. */
const fromLocal = (v: string) => instantInZone(v).toISOString()

function Mute({ alert, onChange }: { alert: Alert; onChange: (a: Alert) => void }) {
  const [custom, setCustom] = useState('')
  const [error, setError] = useState<unknown>(null)
  const mute = async (until: string | null) => {
    setError(null)
    try {
      onChange((await api<{ alert: Alert }>('PATCH', `/api/v1/alerts/${id}`, { muted_until: until })).alert)
    } catch (err) {
      setError(err)
    }
  }
  const inHours = (h: number) => new Date(Date.now() + h * 3600_000).toISOString()
  const submitCustom = (e: Event) => {
    e.preventDefault()
    if (!custom || Number.isNaN(Date.parse(custom))) return setError(new Error('Pick a date and time to mute until.'))
    if (Date.parse(custom) <= Date.now()) return setError(new Error('Pick a time in the future.'))
    void mute(fromLocal(custom))
  }
  return html`<section class="card" aria-labelledby="mute-title"><h2 id="mute-title">Mute</h2>
    <p class="small muted">While muted the alert is still evaluated, but nothing is sent (fires and resolves alike). A breach still in force when the mute ends is sent within seconds.</p>
    ${isMuted(alert) ? html`<p role="status" data-testid="muted">Muted until ${when(alert.muted_until)}.</p>` : html`<p data-testid="muted">Not muted.</p>`}
    <div class="actions">
      <button type="button" class="secondary" onClick=${() => mute(inHours(1))}>Mute for 1 hour</button>
      <button type="button" class="secondary" onClick=${() => mute(inHours(24))}>Mute for 1 day</button>
      ${isMuted(alert) ? html`<button type="button" onClick=${() => mute(null)}>Unmute</button>` : null}
    </div>
    <form class="actions" onSubmit=${submitCustom}>
      <${Field} id="mute-until" label=${`Mute until (${ZONE} time)`}><input id="mute-until" type="datetime-local" value=${custom} onInput=${(e: any) => setCustom(e.currentTarget.value)} /><//>
      <button type="submit" class="secondary">Mute until then</button>
    </form>
    <${ErrorNotice} error=${error} />
  </section>`
}

/** What "Send a test" sends, in the words of the alert's channel (each as its receiver will see it). */
const TEST_DELIVERY: Record<Alert['channel'], unknown> = {
  webhook: html`One signed POST to this alert's webhook URL, like any delivery, with <code>event: "test"</code>.`,
  slack: html`One message to this alert's Slack channel, marked as a test.`,
  email: html`One e-mail to this alert's address, marked as a test.`,
  pagerduty: html`One PagerDuty event to this alert's service (a trigger of severity <code>info</code>), marked as a test.`,
  opsgenie: html`One Opsgenie alert to this alert's team (priority <code>P5</code>), marked as a test.`,
}

function SendTest({ alert, onSent }: { alert: Alert; onSent: () => void }) {
  const [error, setError] = useState<unknown>(null)
  const [sent, setSent] = useState(false)
  const send = async () => {
    setError(null)
    setSent(false)
    try {
      await api('POST', `/api/v1/alerts/${id}/test`)
      setSent(true)
      onSent()
    } catch (err) {
      setError(err)
    }
  }
  return html`<section class="card" aria-labelledby="test-title"><h2 id="test-title">Send a test</h2>
    <p class="small muted">${TEST_DELIVERY[alert.channel]} It is sent even while muted.</p>
    <div class="actions"><button type="button" onClick=${send}>Send a test</button></div>
    ${sent ? html`<p class="notice ok" role="status">Test queued: its delivery and the receiver's answer appear in the history below.</p>` : null}
    <${ErrorNotice} error=${error} />
  </section>`
}

function Edit({ alert, onChange }: { alert: Alert; onChange: (a: Alert) => void }) {
  const [field, label] = FIELD[alert.channel]
  const role = windowRole(alert)
  // Without a role of its own the window is only the silence "when the stat goes quiet" waits: shown as that, with its value.
  const windowNow = role ? alert.window_minutes : alert.no_data_minutes
  const [f, setF] = useState({
    threshold: String(alert.threshold),
    window_minutes: String(windowNow),
    cooldown_minutes: String(alert.cooldown_minutes),
    target: alert.channel_config[field] ?? '',
    on_no_data: alert.on_no_data,
  })
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [error, setError] = useState<unknown>(null)
  const [saved, setSaved] = useState(false)
  const set = (k: keyof typeof f) => (e: any) => setF({ ...f, [k]: e.currentTarget.value })
  const threshold = THRESHOLD.includes(alert.condition_type)
  const showWindow = alert.condition_type !== 'anomaly' && (role !== null || f.on_no_data !== 'keep')
  const submit = async (e: Event) => {
    e.preventDefault()
    setError(null)
    setSaved(false)
    const found: Record<string, string> = {}
    if (threshold && (f.threshold.trim() === '' || !Number.isFinite(Number(f.threshold)))) found.threshold = 'Enter a number.'
    const int = (v: string, min: number) => /^\d+$/.test(v.trim()) && Number(v) >= min && Number(v) <= 10_080
    if (showWindow && !int(f.window_minutes, 1)) found.window_minutes = 'A whole number of minutes from 1 to 10,080.'
    if (!int(f.cooldown_minutes, 0)) found.cooldown_minutes = 'A whole number of minutes from 0 to 10,080.'
    if (!f.target.trim()) found[`channel_config.${field}`] = 'Required for this channel.'
    setErrors(found)
    if (Object.keys(found).length) return
    try {
      const body = {
        ...(threshold ? { threshold: Number(f.threshold), on_no_data: f.on_no_data } : {}),
        // Sent only when shown and changed: a window given is also the on_no_data silence (else 60 minutes).
        ...(showWindow && Number(f.window_minutes) !== windowNow ? { window_minutes: Number(f.window_minutes) } : {}),
        cooldown_minutes: Number(f.cooldown_minutes),
        // The channel's other fields set through the API (a custom pagerduty_url or opsgenie_url) are sent back as
        // they are: channel_config is replaced whole, and leaving them out dropped them.
        channel_config: { ...keptConfig(alert), [field]: f.target.trim() },
      }
      onChange((await api<{ alert: Alert }>('PATCH', `/api/v1/alerts/${id}`, body)).alert)
      setSaved(true)
    } catch (err) {
      setErrors(fieldErrors(err))
      setError(err)
    }
  }
  const inv = (k: string) => (errors[k] ? 'true' : undefined)
  return html`<form class="card" onSubmit=${submit} noValidate aria-labelledby="edit-title"><h2 id="edit-title">Change</h2>
    <div class="grid2">
      ${threshold ? html`<${Field} id="threshold" label="Threshold" error=${errors.threshold}><input id="threshold" inputMode="decimal" value=${f.threshold} onInput=${set('threshold')} aria-invalid=${inv('threshold')} /><//>` : null}
      ${
        !showWindow
          ? null
          : html`<${Field} id="window_minutes" label=${role ?? 'Minutes of silence before "when the stat goes quiet" acts'}
        hint=${
          !role
            ? 'Only "when the stat goes quiet" uses it: this alert compares the last minute\'s value.'
            : threshold && f.on_no_data !== 'keep'
              ? `Also how long a silence must last before "when the stat goes quiet" acts (now ${alert.no_data_minutes} min${alert.no_data_minutes === alert.window_minutes ? '' : ': 60 until a window is saved'}).`
              : undefined
        }
        error=${errors.window_minutes}>
        <input id="window_minutes" inputMode="numeric" value=${f.window_minutes} onInput=${set('window_minutes')} aria-invalid=${inv('window_minutes')} /><//>`
      }
      <${Field} id="cooldown_minutes" label="Cooldown (minutes)" error=${errors.cooldown_minutes}>
        <input id="cooldown_minutes" inputMode="numeric" value=${f.cooldown_minutes} onInput=${set('cooldown_minutes')} aria-invalid=${inv('cooldown_minutes')} /><//>
      <${Field} id="target" label=${label} hint=${alert.channel === 'email' ? 'A new address gets a confirmation link first; nothing is mailed to it before.' : endpointHint(alert)} error=${errors[`channel_config.${field}`]}>
        <input id="target" type=${alert.channel === 'email' ? 'email' : alert.channel === 'pagerduty' || alert.channel === 'opsgenie' ? 'text' : 'url'} value=${f.target} onInput=${set('target')} aria-invalid=${inv(`channel_config.${field}`)} /><//>
      ${
        threshold
          ? html`<${Field} id="on_no_data" label="When the stat goes quiet" hint="No point for the window: keep (a firing alert stays firing), resolve a firing alert, or fire." error=${errors.on_no_data}>
        <select id="on_no_data" value=${f.on_no_data} onChange=${set('on_no_data')}>${Object.entries(NO_DATA).map(([k, v]) => html`<option value=${k}>${v}</option>`)}</select><//>`
          : null
      }
    </div>
    <${ErrorNotice} error=${error} />
    ${saved ? html`<p class="notice ok" role="status">Saved.${alert.state === 'pending_confirmation' ? ' Check that inbox and click the confirmation link.' : ''}</p>` : null}
    <div class="actions"><button type="submit">Save changes</button></div>
  </form>`
}

function attempts(e: AlertEvent) {
  if (!e.deliveries.length) return e.delivery_status === 'queued' ? 'queued' : '—'
  return e.deliveries
    .map((d) => `#${d.attempt} ${when(d.at)}: ${d.status_code ?? ''}${d.error ? ` ${d.error}` : d.status_code === null ? 'sent' : ''}`)
    .join('; ')
}

function AlertPage() {
  const [alert, setAlert] = useState<Alert | null>(null)
  const [events, setEvents] = useState<AlertEvent[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const load = async () => {
    try {
      const [a, e] = await Promise.all([
        api<{ alert: Alert }>('GET', `/api/v1/alerts/${id}`),
        api<{ events: AlertEvent[] }>('GET', `/api/v1/alerts/${id}/events`),
      ])
      setAlert(a.alert)
      setEvents(e.events)
      setError(null)
    } catch (err) {
      setError(err)
    }
  }
  usePoll(load, [])
  if (!alert)
    return html`<p><a href="/alerts">← Alerts</a></p><h1>Alert</h1>${error ? html`<${ErrorNotice} error=${error} retry=${load} />` : html`<${Loading} />`}`
  return html`<p><a href="/alerts">← Alerts</a></p>
    <h1>Alert on <a href=${`/stats/${encodeURIComponent(alert.stat_name)}`}>${alert.stat_name}</a></h1>
    <p><${Badge} state=${alert.state} /> ${alert.aggregation && alert.aggregation !== 'avg' ? html`<span data-testid="aggregation">${alert.aggregation} over ${alert.window_minutes} min</span> ` : null}${alert.condition_type} ${THRESHOLD.includes(alert.condition_type) ? num(alert.threshold) : alert.condition_type === 'anomaly' ? '(fires when an anomaly incident opens)' : `${alert.window_minutes} min`} · last value ${num(alert.last_value)} · checked ${age(alert.last_evaluated_at)}</p>
    ${
      alert.group_by
        ? html`<section aria-labelledby="groups-title"><h2 id="groups-title">By ${alert.group_by}</h2>
      ${
        alert.filter
          ? html`<p class="small muted">Only series with ${Object.entries(alert.filter)
              .map(([k, v]) => `${k}:${v}`)
              .join(', ')}.</p>`
          : null
      }
      ${
        alert.groups?.length
          ? html`<div class="table-wrap"><table class="stack" data-testid="alert-groups"><thead><tr><th>${alert.group_by}</th><th>State</th><th class="num">Last value</th></tr></thead>
        <tbody>${alert.groups.map(
          (g) =>
            html`<tr><td data-label=${alert.group_by}>${g.tags[alert.group_by!]}</td><td data-label="State"><${Badge} state=${g.state} /></td><td data-label="Last value" class="num">${num(g.last_value)}</td></tr>`,
        )}</tbody></table></div>`
          : html`<p class="small muted">No group judged yet: each value of ${alert.group_by} appears with its first evaluation.</p>`
      }</section>`
        : null
    }
    <${ErrorNotice} error=${error} retry=${load} />
    <${Mute} alert=${alert} onChange=${(a: Alert) => {
      setAlert(a)
      void load()
    }} />
    <${SendTest} alert=${alert} onSent=${load} />
    <${Edit} alert=${alert} onChange=${(a: Alert) => {
      setAlert(a)
      void load()
    }} />
    <h2>History</h2>
    ${
      !events
        ? html`<${Loading} />`
        : events.length === 0
          ? html`<${Empty}>Nothing yet: no fire, resolve, mute or test.<//>`
          : html`<div class="table-wrap"><table class="stack" data-testid="history">
      <thead><tr><th>When</th><th>Event</th><th class="num">Value</th><th>What happened</th><th>Delivery attempts</th></tr></thead><tbody>
      ${events.map(
        (
          e,
        ) => html`<tr><td data-label="When">${when(e.at)}</td><td data-label="Event">${e.event}</td><td data-label="Value" class="num">${num(e.observed_value)}</td>
        <td data-label="What happened" class="small">${e.detail !== null ? inZoneWords(e.detail) : e.delivery_status ? html`<${Badge} state=${e.delivery_status} />` : ''}</td><td data-label="Delivery attempts" class="small">${attempts(e)}</td></tr>`,
      )}
      </tbody></table></div>`
    }`
}

mount(AlertPage)
