// Alerts (docs/decisions.md §I-2.4, §I-3.2; §8): state badges, the
// recent deliveries of each, and a create form for the seven conditions and
// five channels (webhook, Slack, e-mail, PagerDuty, Opsgenie; §23) that explains each field and checks
// what the API checks. A PagerDuty or Opsgenie key is listed by its last four characters only.
import type { Aggregation, Condition } from '../../../shared/alerts/schema.js'
import { api, fieldErrors, pageData } from './lib/api.js'
import { age, num, when } from './lib/format.js'
import { usePoll } from './lib/poll.js'
import { Badge, Empty, ErrorNotice, Field, html, Loading, mount, useEffect, useState } from './lib/ui.js'

interface Alert {
  id: string
  stat_name: string
  condition_type: Condition
  threshold: number
  window_minutes: number
  direction: 'above' | 'below'
  aggregation: Aggregation
  channel: Channel
  channel_config: Record<string, string>
  cooldown_minutes: number
  state: string
  last_value: number | null
  last_evaluated_at: string | null
  last_delivery_error: string | null
  last_delivery_failed_at: string | null
  created_at: string
  muted_until: string | null
}
interface Delivery {
  id: string
  event: string
  status: string
  attempts: number
  last_error: string | null
  observed_value: number | null
  created_at: string
  delivered_at: string | null
}
type Channel = 'webhook' | 'slack' | 'email' | 'pagerduty' | 'opsgenie'

const CONDITIONS: Record<Condition, { label: string; explain: string; threshold?: string; window?: string }> = {
  above: {
    label: 'Above a threshold',
    explain: "Fires when the last minute's value is greater than the threshold; exactly at the threshold counts as recovered.",
    threshold: 'Threshold',
  },
  below: { label: 'Below a threshold', explain: "Fires when the last minute's value is less than the threshold.", threshold: 'Threshold' },
  pct_change: {
    label: 'Changes by a percentage',
    explain:
      'Compares the value now with the value a window ago. A positive threshold fires on a rise larger than it, a negative one on a fall.',
    threshold: 'Change in percent (e.g. 50 or -30)',
    window: 'Compare with the value this many minutes ago',
  },
  sustained: {
    label: 'Stays beyond a threshold',
    explain: 'Fires when every evaluation over the window saw the value beyond the threshold, on the side you pick.',
    threshold: 'Threshold',
    window: 'For how many minutes it must hold',
  },
  heartbeat: {
    label: 'Heartbeat stops',
    explain: 'Fires when no point has arrived for longer than the window: for jobs that report when they run.',
    window: 'Minutes without a point before it fires',
  },
  missing_data: {
    label: 'Data goes missing',
    explain: 'Fires when the stat has had no point for longer than the window.',
    window: 'Minutes without a point before it fires',
  },
  anomaly: {
    label: 'Does something unusual',
    explain:
      'Fires when the anomaly detector opens an incident on the stat (an hour far outside what that hour usually looks like) and resolves when it closes. Plans with anomaly detection only.',
  },
}
/** What this deployment's egress rules take (the shell says which: WEBHOOK_ALLOW_PRIVATE, and loopback in development). */
function webhookTargets(): string {
  switch (pageData.webhookTargets) {
    case 'private':
      return 'This deployment also delivers to private and internal addresses (WEBHOOK_ALLOW_PRIVATE is on).'
    case 'loopback':
      return "Private and internal addresses are refused, except this machine's own (127.0.0.1, localhost), which development allows."
    default:
      return 'Private and internal addresses are refused.'
  }
}
const CHANNELS: Record<Channel, { label: string; field: string; input: string; explain: string }> = {
  webhook: {
    label: 'Webhook',
    field: 'webhook_url',
    input: 'Webhook URL',
    explain: `An http(s) URL that receives a signed JSON POST on fire and on resolve. ${webhookTargets()}`,
  },
  slack: {
    label: 'Slack',
    field: 'slack_webhook_url',
    input: 'Slack incoming-webhook URL',
    explain: "From Slack: Apps → Incoming Webhooks → the channel's URL (https://hooks.slack.com/services/…).",
  },
  email: {
    label: 'E-mail',
    field: 'email',
    input: 'E-mail address',
    explain: 'The address gets a confirmation link first; nothing is mailed until it is clicked.',
  },
  // On-call tools (docs/decisions.md §23): a key rather than a URL; a fire triggers, a recovery resolves.
  pagerduty: {
    label: 'PagerDuty',
    field: 'pagerduty_routing_key',
    input: 'PagerDuty routing key',
    explain: "From PagerDuty: the service's Integrations → Events API v2 → Integration Key.",
  },
  opsgenie: {
    label: 'Opsgenie',
    field: 'opsgenie_api_key',
    input: 'Opsgenie API key',
    explain: "From Opsgenie: the team's Integrations → API → API Key.",
  },
}
const isKey = (c: Channel) => c === 'pagerduty' || c === 'opsgenie'

/** What an alert compares (docs/decisions.md §20): the last minute's value, or a gauge's percentile over a window. */
const AGGREGATIONS: Record<Aggregation, string> = {
  avg: "The last minute's value (a gauge's average, a counter's sum)",
  p50: 'Median (p50) over the window',
  p90: 'p90 over the window',
  p95: 'p95 over the window',
  p99: 'p99 over the window',
}
const PERCENTILE_CONDITIONS: Condition[] = ['above', 'below', 'sustained']

/** "p95 over 5 min " for a percentile alert, nothing for the last minute's value. */
export const compared = (a: Pick<Alert, 'aggregation' | 'window_minutes'>) =>
  a.aggregation && a.aggregation !== 'avg' ? `${a.aggregation} over ${a.window_minutes} min ` : ''

function describe(a: Alert): string {
  switch (a.condition_type) {
    case 'above':
      return `${compared(a) || 'value '}above ${num(a.threshold)}`
    case 'below':
      return `${compared(a) || 'value '}below ${num(a.threshold)}`
    case 'pct_change':
      return `changes by more than ${num(a.threshold)}% over ${a.window_minutes} min`
    case 'sustained':
      return `${compared(a)}stays ${a.direction} ${num(a.threshold)} for ${a.window_minutes} min`
    case 'heartbeat':
      return `no heartbeat for ${a.window_minutes} min`
    case 'missing_data':
      return `no data for ${a.window_minutes} min`
    case 'anomaly':
      return 'an anomaly incident opens'
  }
}

function Deliveries({ alert }: { alert: Alert }) {
  const [rows, setRows] = useState<Delivery[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [open, setOpen] = useState(false)
  useEffect(() => {
    if (!open) return
    api<{ deliveries: Delivery[] }>('GET', `/api/v1/alerts/${alert.id}/deliveries`).then((r) => {
      setRows(r.deliveries)
      setError(null)
    }, setError)
  }, [open, alert.state])
  return html`<details onToggle=${(e: any) => setOpen(e.currentTarget.open)}><summary>Recent deliveries</summary>
    <${ErrorNotice} error=${error} />
    ${
      !open
        ? null
        : rows === null
          ? (error ? null : html`<${Loading} />`)
          : rows.length === 0
            ? html`<p class="muted small">Nothing sent yet: this alert has not fired.</p>`
            : html`<div class="table-wrap"><table class="stack"><thead><tr><th>Event</th><th>Status</th><th>Value</th><th>Queued</th><th>Attempts</th><th>Error</th></tr></thead><tbody>
        ${rows.map(
          (
            d,
          ) => html`<tr key=${d.id}><td data-label="Event">${d.event}</td><td data-label="Status"><${Badge} state=${d.status} /></td><td data-label="Value">${num(d.observed_value)}</td>
          <td data-label="Queued">${when(d.created_at)}</td><td data-label="Attempts">${d.attempts}</td><td data-label="Error" class="small">${d.last_error ?? ''}</td></tr>`,
        )}</tbody></table></div>`
    }
  </details>`
}

interface Suggestions {
  basis: { from: string; to: string; minutes_with_value: number }
  largest_minutes: Array<{ at: string; value: number }>
  suggestions: Array<{
    threshold: number
    quantile: number | null
    catches_largest: number
    would_have_fired: number
    minutes_in_breach: number
    suppressed_by_cooldown: number
  }>
  warnings: string[]
}

/** "Suggest a threshold": candidates from the stat's own history, each back-tested over the lookback. */
function SuggestThreshold({
  stat,
  condition,
  cooldown,
  aggregation,
  window,
  onPick,
}: {
  stat: string
  condition: 'above' | 'below'
  cooldown: string
  aggregation: Aggregation
  window: string
  onPick: (t: number) => void
}) {
  const [res, setRes] = useState<Suggestions | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    setRes(null)
    setError(null)
  }, [stat, condition, cooldown, aggregation, window])
  const load = async () => {
    setBusy(true)
    setError(null)
    try {
      const q = new URLSearchParams({
        stat,
        condition_type: condition,
        lookback: '30d',
        ...(/^\d+$/.test(cooldown) ? { cooldown_minutes: cooldown } : {}),
        ...(aggregation !== 'avg' ? { aggregation, ...(/^\d+$/.test(window) ? { window_minutes: window } : {}) } : {}),
      })
      setRes(await api<Suggestions>('GET', `/api/v1/thresholds/suggest?${q}`))
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  const days = res ? Math.max(1, Math.round((Date.parse(res.basis.to) - Date.parse(res.basis.from)) / 86_400_000)) : 0
  return html`<div class="suggest">
    <button type="button" class="secondary" onClick=${load} disabled=${busy || !stat.trim()}>${busy ? 'Looking at the history…' : 'Suggest a threshold'}</button>
    <${ErrorNotice} error=${error} />
    ${
      res
        ? html`<div class="card small" aria-live="polite">
      ${
        res.suggestions.length === 0
          ? res.basis.minutes_with_value
            ? null
            : html`<p class="muted">No minute of “${stat}” has a value in the last ${days} days: nothing to suggest from yet.</p>`
          : html`
        <p>From ${res.basis.minutes_with_value.toLocaleString('en-US')} minutes of “${stat}”${aggregation !== 'avg' ? ` (the ${aggregation} over the ${window} minutes before each)` : ''} over the last ${days} days, replayed minute by minute as the alert would run:</p>
        <div class="table-wrap"><table class="stack"><thead><tr><th class="num">Threshold</th><th>Percentile</th><th class="num">Would have fired</th><th class="num">Catches the largest</th><th class="num">Minutes in breach</th><th><span class="sr-only">Use</span></th></tr></thead><tbody>
          ${res.suggestions.map(
            (
              c,
            ) => html`<tr><td data-label="Threshold" class="num">${num(c.threshold)}</td><td data-label="Percentile">${c.quantile === null ? '—' : `p${+(c.quantile * 100).toFixed(1)}`}</td>
            <td data-label="Would have fired" class="num">${c.would_have_fired} ${c.would_have_fired === 1 ? 'time' : 'times'}${c.suppressed_by_cooldown ? ` (+${c.suppressed_by_cooldown} held back by the cooldown)` : ''}</td>
            <td data-label="Catches the largest" class="num">${c.catches_largest} of ${res.largest_minutes.length}</td>
            <td data-label="Minutes in breach" class="num">${c.minutes_in_breach}</td>
            <td data-label=""><button type="button" class="link" onClick=${() => onPick(c.threshold)} aria-label=${`Use ${c.threshold}`}>Use</button></td></tr>`,
          )}
        </tbody></table></div>
        <p class="small muted">The largest minutes of the lookback: ${res.largest_minutes.map((m) => `${num(m.value)} (${when(m.at)})`).join(', ')}.</p>`
      }
      ${res.warnings.map((w) => html`<p class="muted">${w}</p>`)}
    </div>`
        : null
    }
  </div>`
}

interface Form {
  stat_name: string
  condition_type: Condition
  aggregation: Aggregation
  threshold: string
  window_minutes: string
  direction: 'above' | 'below'
  channel: Channel
  target: string
  cooldown_minutes: string
  on_no_data: 'keep' | 'resolve' | 'alert'
}

/** The aggregation the form sends: a percentile only where the condition takes one. */
const aggregationOf = (f: Pick<Form, 'condition_type' | 'aggregation'>): Aggregation =>
  PERCENTILE_CONDITIONS.includes(f.condition_type) ? f.aggregation : 'avg'
/** Whether the form asks for a window: the condition's own, or the span a percentile is taken over. */
const hasWindow = (f: Pick<Form, 'condition_type' | 'aggregation'>) =>
  Boolean(CONDITIONS[f.condition_type].window) || aggregationOf(f) !== 'avg'

/** The checks the API makes, run before sending so that mistakes show next to their field. */
export function validate(f: Form): Record<string, string> {
  const e: Record<string, string> = {}
  const c = CONDITIONS[f.condition_type]
  if (!f.stat_name.trim()) e.stat_name = 'Name the stat to watch.'
  else if (f.stat_name.length > 128) e.stat_name = 'At most 128 characters.'
  else if (!/^[\p{L}\p{N} ._&-]+$/u.test(f.stat_name)) e.stat_name = 'Letters, numbers, spaces, dot, underscore and hyphen only.'
  if (c.threshold && (f.threshold.trim() === '' || !Number.isFinite(Number(f.threshold)))) e.threshold = 'Enter a number.'
  const int = (v: string, min: number) => /^\d+$/.test(v.trim()) && Number(v) >= min && Number(v) <= 10_080
  if (hasWindow(f) && !int(f.window_minutes, 1)) e.window_minutes = 'A whole number of minutes from 1 to 10,080 (a week).'
  if (!int(f.cooldown_minutes, 0)) e.cooldown_minutes = 'A whole number of minutes from 0 to 10,080.'
  const field = `channel_config.${CHANNELS[f.channel].field}`
  if (!f.target.trim()) e[field] = 'Required for this channel.'
  else if (f.channel === 'pagerduty') {
    if (!/^[A-Za-z0-9]{20,64}$/.test(f.target.trim())) e[field] = 'A PagerDuty integration key: 20 to 64 letters and digits.'
  } else if (f.channel === 'opsgenie') {
    if (f.target.trim().length < 8 || f.target.trim().length > 200) e[field] = 'An Opsgenie API key: 8 to 200 characters.'
  } else if (f.channel === 'email' ? !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(f.target) : !/^https?:\/\/[^\s/]+/i.test(f.target)) {
    e[field] = f.channel === 'email' ? 'Enter an e-mail address.' : 'Enter an http:// or https:// URL.'
  }
  return e
}

function CreateForm({ stats, onCreated }: { stats: string[]; onCreated: (a: Alert, secret: string) => void }) {
  const [f, setF] = useState<Form>({
    stat_name: new URLSearchParams(location.search).get('stat') ?? '',
    condition_type: 'above',
    aggregation: 'avg',
    threshold: '',
    window_minutes: '5',
    direction: 'above',
    channel: 'webhook',
    target: '',
    cooldown_minutes: '0',
    on_no_data: 'keep',
  })
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const set = (k: keyof Form) => (e: any) => setF({ ...f, [k]: e.currentTarget.value })
  const c = CONDITIONS[f.condition_type]
  const ch = CHANNELS[f.channel]
  const targetKey = `channel_config.${ch.field}`

  const submit = async (e: Event) => {
    e.preventDefault()
    setError(null)
    const found = validate(f)
    setErrors(found)
    if (Object.keys(found).length) {
      document.getElementById(Object.keys(found)[0] === targetKey ? 'target' : Object.keys(found)[0])?.focus()
      return
    }
    setBusy(true)
    try {
      const body = {
        stat_name: f.stat_name,
        condition_type: f.condition_type,
        threshold: c.threshold ? Number(f.threshold) : 0,
        ...(aggregationOf(f) !== 'avg' ? { aggregation: aggregationOf(f) } : {}),
        // Left out where the condition has no window: the API's default, and on_no_data then waits 60 minutes of silence.
        ...(hasWindow(f) ? { window_minutes: Number(f.window_minutes) } : {}),
        ...(f.condition_type === 'sustained' ? { direction: f.direction } : {}),
        channel: f.channel,
        channel_config: { [ch.field]: f.target.trim() },
        cooldown_minutes: Number(f.cooldown_minutes),
        ...(c.threshold ? { on_no_data: f.on_no_data } : {}),
      }
      const res = await api<{ alert: Alert; signing_secret: string }>('POST', '/api/v1/alerts', body)
      onCreated(res.alert, res.signing_secret)
      setF({ ...f, threshold: '', target: '' })
    } catch (err) {
      setErrors(fieldErrors(err))
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  const inv = (k: string) => (errors[k] ? 'true' : undefined)
  return html`<form class="card" id="create" onSubmit=${submit} noValidate aria-labelledby="create-title">
    <h2 id="create-title">Create an alert</h2>
    <div class="grid2">
      <${Field} id="stat_name" label="Stat" hint="The stat's name; it need not have data yet." error=${errors.stat_name}>
        <input id="stat_name" list="stat-names" value=${f.stat_name} onInput=${set('stat_name')} aria-invalid=${inv('stat_name')} autocomplete="off" />
        <datalist id="stat-names">${stats.map((s) => html`<option value=${s} />`)}</datalist>
      <//>
      <${Field} id="condition_type" label="Condition" hint=${c.explain}>
        <select id="condition_type" value=${f.condition_type} onChange=${set('condition_type')}>
          ${(Object.keys(CONDITIONS) as Condition[]).map((k) => html`<option value=${k}>${CONDITIONS[k].label}</option>`)}</select>
      <//>
      ${
        PERCENTILE_CONDITIONS.includes(f.condition_type)
          ? html`<${Field} id="aggregation" label="Compare" hint="A percentile (gauges only) is taken over the points of the window: p95 catches the slowest 5 % that an average hides.">
        <select id="aggregation" value=${f.aggregation} onChange=${set('aggregation')}>
          ${(Object.keys(AGGREGATIONS) as Aggregation[]).map((k) => html`<option value=${k}>${AGGREGATIONS[k]}</option>`)}</select><//>`
          : null
      }
      ${
        c.threshold
          ? html`<${Field} id="threshold" label=${c.threshold} error=${errors.threshold}>
        <input id="threshold" inputMode="decimal" value=${f.threshold} onInput=${set('threshold')} aria-invalid=${inv('threshold')} /><//>`
          : null
      }
      ${
        f.condition_type === 'sustained'
          ? html`<${Field} id="direction" label="Side" hint="Which side of the threshold must hold.">
        <select id="direction" value=${f.direction} onChange=${set('direction')}><option value="above">Above the threshold</option><option value="below">Below the threshold</option></select><//>`
          : null
      }
      ${
        hasWindow(f)
          ? html`<${Field} id="window_minutes" label=${c.window ?? 'Over the last how many minutes'} hint=${aggregationOf(f) !== 'avg' ? `The ${aggregationOf(f)} of the points of this many minutes is compared at each check${c.window ? ', and must stay beyond the threshold for as long' : ''}.` : undefined} error=${errors.window_minutes}>
        <input id="window_minutes" inputMode="numeric" value=${f.window_minutes} onInput=${set('window_minutes')} aria-invalid=${inv('window_minutes')} /><//>`
          : null
      }
      <${Field} id="cooldown_minutes" label="Cooldown (minutes)" hint="After a fire, further fires within this time are not sent. A resolve is always sent." error=${errors.cooldown_minutes}>
        <input id="cooldown_minutes" inputMode="numeric" value=${f.cooldown_minutes} onInput=${set('cooldown_minutes')} aria-invalid=${inv('cooldown_minutes')} />
      <//>
    </div>
    ${
      f.condition_type === 'above' || f.condition_type === 'below'
        ? html`<${SuggestThreshold} stat=${f.stat_name} condition=${f.condition_type} cooldown=${f.cooldown_minutes}
      aggregation=${aggregationOf(f)} window=${f.window_minutes}
      onPick=${(t: number) => setF({ ...f, threshold: String(t) })} />`
        : null
    }
    ${
      c.threshold
        ? html`<${Field} id="on_no_data" label="When the stat goes quiet" hint=${`No point for ${c.window ? 'the window' : 'an hour'}: keep the alert as it is (a firing alert stays firing), resolve it, or fire.`}>
      <select id="on_no_data" value=${f.on_no_data} onChange=${set('on_no_data')}>
        <option value="keep">Keep its state</option><option value="resolve">Resolve it</option><option value="alert">Fire</option></select><//>`
        : null
    }
    <fieldset><legend>Send to</legend>
      <div class="actions" role="radiogroup" aria-label="Channel">${(Object.keys(CHANNELS) as Channel[]).map(
        (k) => html`<label class="inline"><input type="radio" name="channel" value=${k} checked=${f.channel === k}
        onChange=${() => setF({ ...f, channel: k, target: '' })} /> ${CHANNELS[k].label}</label>`,
      )}</div>
      <${Field} id="target" label=${ch.input} hint=${ch.explain} error=${errors[targetKey]}>
        <input id="target" type=${f.channel === 'email' ? 'email' : isKey(f.channel) ? 'text' : 'url'} autocomplete="off" value=${f.target} onInput=${set('target')} aria-invalid=${inv(targetKey)} />
      <//>
    </fieldset>
    <${ErrorNotice} error=${error} />
    <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create alert'}</button></div>
  </form>`
}

function AlertsPage() {
  const [alerts, setAlerts] = useState<Alert[] | null>(null)
  const [stats, setStats] = useState<string[]>([])
  const [error, setError] = useState<unknown>(null)
  const [created, setCreated] = useState<{ alert: Alert; secret: string } | null>(null)
  const load = async () => {
    try {
      setAlerts((await api<{ alerts: Alert[] }>('GET', '/api/v1/alerts')).alerts)
      setError(null)
    } catch (err) {
      setError(err)
    }
  }
  usePoll(load, [])
  useEffect(() => {
    api<{ stats: Array<{ name: string }> }>('GET', '/api/v1/stats').then(
      (r) => setStats(r.stats.map((s) => s.name)),
      () => {},
    )
  }, [])
  const remove = async (a: Alert) => {
    if (!confirm(`Delete the alert on “${a.stat_name}” (${describe(a)})? Queued deliveries are dropped and no resolve is sent.`)) return
    try {
      await api('DELETE', `/api/v1/alerts/${a.id}`)
      if (created?.alert.id === a.id) setCreated(null)
      await load()
    } catch (err) {
      setError(err)
    }
  }
  const onCreated = async (a: Alert, secret: string) => {
    setCreated({ alert: a, secret })
    await load()
  }
  return html`<h1>Alerts</h1>
    <p class="muted">Alerts are checked every few seconds against each stat's last minute; a breach reaches you within a minute. ${pageData.plan === 'free' ? 'The free plan holds 2 alerts.' : ''}</p>
    ${
      created
        ? html`<div class="notice ok" role="status">Alert on “${created.alert.stat_name}” created${created.alert.state === 'pending_confirmation' ? ': check that inbox and click the confirmation link, nothing is mailed before' : ''}.
      ${created.alert.channel === 'webhook' ? html`<br />Its deliveries are signed (<code>X-Service-Signature</code>) with this secret, shown once: <code data-testid="signing-secret">${created.secret}</code>` : null}</div>`
        : null
    }
    <h2>Your alerts</h2>
    <${ErrorNotice} error=${error} retry=${load} />
    ${
      alerts === null
        ? error
          ? null
          : html`<${Loading} />`
        : alerts.length === 0
          ? html`<${Empty}>No alerts yet. Create one below.<//>`
          : alerts.map(
              (a) => html`<article class="card" key=${a.id} data-alert=${a.id}>
          <div class="actions"><${Badge} state=${a.state} /><a class="row-title" href=${`/stats/${encodeURIComponent(a.stat_name)}`}>${a.stat_name}</a><span>${describe(a)}</span></div>
          <p class="small">→ ${CHANNELS[a.channel].label}: <code>${isKey(a.channel) ? `…${(a.channel_config[CHANNELS[a.channel].field] ?? '').slice(-4)}` : Object.values(a.channel_config)[0]}</code>${a.cooldown_minutes ? ` · cooldown ${a.cooldown_minutes} min` : ''}</p>
          <p class="small muted">Last value ${num(a.last_value)} · checked ${age(a.last_evaluated_at)}${a.muted_until && Date.parse(a.muted_until) > Date.now() ? ` · muted until ${when(a.muted_until)}` : ''}</p>
          <p class="small"><a href=${`/alerts/${a.id}`} aria-label=${`Manage alert on ${a.stat_name}`}>History, mute, test and changes</a></p>
          ${a.last_delivery_error ? html`<div class="notice error small">Last delivery failed ${age(a.last_delivery_failed_at)}: ${a.last_delivery_error}</div>` : null}
          <${Deliveries} alert=${a} />
          <button type="button" class="secondary" onClick=${() => remove(a)} aria-label=${`Delete alert on ${a.stat_name}`}>Delete</button>
        </article>`,
            )
    }
    <${CreateForm} stats=${stats} onCreated=${onCreated} />`
}

mount(AlertsPage)
