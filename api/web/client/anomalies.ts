// Anomalies (docs/decisions.md §I-4.7, §I-4.8; decisions 11 and 16): the incidents, open and closed, with their numbers and a
// link to the stat's chart where their hours are marked, and per stat whether the detector scores it and, if
// not, why in plain words.
import type { AnomalyJson, DiagnosticsJson, StatDiagnosticsJson } from '../../../shared/anomalies/schema.js'
import type { z } from 'zod'
import { explanationInZone } from '../../../shared/time/zones.js'
import { api } from './lib/api.js'
import { ZONE } from './lib/clock.js'
import { full, num, when } from './lib/format.js'
import { Empty, ErrorNotice, html, Loading, mount, useEffect, useState } from './lib/ui.js'

type Anomaly = z.infer<typeof AnomalyJson>

/** Each reason code as a sentence a person reads without knowing the detector (the API's own explanation carries the figures). */
const REASONS: Record<NonNullable<StatDiagnosticsJson['reason']>, string> = {
  tier: 'Your plan does not include anomaly detection.',
  no_rollup: 'Its points have not been summed into hours yet, so there is nothing to check.',
  stale: 'Its newest points are waiting to be summed into hours, so checking is paused until they are.',
  no_signal: 'It has been 0 for every recent hour, so there is no normal level to compare against.',
  short: 'It does not have enough hours of history yet to learn what normal looks like.',
}

function verdict(s: StatDiagnosticsJson): string {
  if (s.reason) return REASONS[s.reason]
  return s.state === 'evaluated'
    ? 'Checked every hour: a spike or dip will open an incident.'
    : 'Ready: it will be checked at the next hourly sweep.'
}

const v = (x: number) => html`<span title=${full(x)}>${num(x)}</span>`

/** The stat's chart over the shortest range that still shows the incident's start, where its flagged hours are marked. */
function chartLink(a: Anomaly): string {
  const ago = (Date.now() - Date.parse(a.started_at)) / 86_400_000
  const range = ago < 6.9 ? '7d' : ago < 29.9 ? '30d' : '90d'
  return `/stats/${encodeURIComponent(a.stat_name)}?range=${range}`
}

/** A series by its tags as the filter of a read writes them (host:web1,region:eu). */
const filterOf = (tags: Record<string, string>) =>
  Object.keys(tags)
    .sort()
    .map((k) => `${k}:${tags[k]}`)
    .join(',')

/** The series that carry an incident (a stat with tagged series), each linking to the stat's chart of that series alone. */
function Carriers({ a }: { a: Anomaly }) {
  const tagged = a.series.filter((c) => c.tags !== null)
  if (!tagged.length) return null
  return html`<div class="small" data-testid="carriers">Carried by ${tagged.map(
    (c, i) =>
      html`${i ? ', ' : ''}<a href=${`${chartLink(a)}&filter=${encodeURIComponent(filterOf(c.tags!))}`}>${filterOf(c.tags!)}</a> (${Math.round(c.share * 100)} %)`,
  )}</div>`
}

function Incidents({ anomalies, status, range }: { anomalies: Anomaly[]; status: string; range: string }) {
  if (!anomalies.length) {
    return html`<${Empty}><p>${status === 'open' ? 'No open incidents: every checked stat is within its normal range.' : `No incidents in the last ${range}.`}</p><//>`
  }
  return html`<div class="table-wrap"><table class="stack" data-testid="incidents"><thead><tr><th>Stat</th><th>What</th><th>When</th><th class="num">Observed</th><th class="num">Expected</th><th class="num">Normal range</th></tr></thead><tbody>
    ${anomalies.map(
      (
        a,
      ) => html`<tr key=${a.id} data-status=${a.status}><td data-label="Stat" class="row-title"><a href=${chartLink(a)}>${a.stat_name}</a></td>
      <td data-label="What">${a.level_shift ? `Level shift (${a.direction === 'spike' ? 'up' : 'down'})` : a.direction === 'spike' ? 'Spike' : 'Dip'}<div class="small" data-testid="summary">${explanationInZone(a.summary, ZONE)}</div><${Carriers} a=${a} /><details><summary class="small">Details</summary><p class="small muted" data-testid="explanation">${explanationInZone(a.explanation, ZONE)}</p></details></td>
      <td data-label="When" class="small">${when(a.started_at)}<br />${a.ended_at ? html`to ${when(a.ended_at)}` : html`<span class="badge firing">Ongoing</span>`}</td>
      <td data-label="Observed" class="num">${v(a.peak.observed)}</td><td data-label="Expected" class="num">${v(a.peak.expected)}</td>
      <td data-label="Normal range" class="num">${v(a.peak.lower)} – ${v(a.peak.upper)}</td></tr>`,
    )}
  </tbody></table></div>`
}

function DiagnosticsTable({ d }: { d: DiagnosticsJson }) {
  if (!d.stats.length) return html`<${Empty}><p>No stats yet. Send points and each stat is listed here with whether it is checked.</p><//>`
  return html`<div class="table-wrap"><table class="stack" data-testid="diagnostics"><thead><tr><th>Stat</th><th>Checked</th><th>Why</th><th>Last checked</th></tr></thead><tbody>
    ${d.stats.map(
      (
        s,
      ) => html`<tr key=${s.stat_name}><td data-label="Stat" class="row-title"><a href=${`/stats/${encodeURIComponent(s.stat_name)}`}>${s.stat_name}</a></td>
      <td data-label="Checked">${s.can_fire ? 'yes' : 'no'}</td>
      <td data-label="Why">${verdict(s)}<details><summary class="small">Details</summary><p class="small muted">${explanationInZone(s.explanation, ZONE)}</p></details></td>
      <td data-label="Last checked" class="small">${when(s.last_evaluated_at)}</td></tr>`,
    )}
  </tbody></table></div>
  ${d.account.truncated ? html`<p class="small muted">Showing ${d.account.stats_reported} of ${d.account.stats_total} stats.</p>` : null}`
}

const STATUSES = [
  ['all', 'Open and closed'],
  ['open', 'Open'],
  ['closed', 'Closed'],
] as const
const LIST_RANGES = ['24h', '7d', '30d'] as const

function AnomaliesPage() {
  const params = new URLSearchParams(location.search)
  const [status, setStatus] = useState<string>(STATUSES.some(([s]) => s === params.get('status')) ? params.get('status')! : 'all')
  const [range, setRange] = useState<string>(LIST_RANGES.includes(params.get('range') as never) ? params.get('range')! : '7d')
  const [list, setList] = useState<{ anomalies: Anomaly[] } | null>(null)
  const [diag, setDiag] = useState<DiagnosticsJson | null>(null)
  const [error, setError] = useState<unknown>(null)
  const load = () => {
    setError(null)
    setList(null)
    Promise.all([
      api<{ anomalies: Anomaly[] }>('GET', `/api/v1/anomalies?status=${status}&range=${range}&limit=100`),
      api<DiagnosticsJson>('GET', '/api/v1/anomalies/diagnostics?limit=100'),
    ]).then(([l, d]) => {
      setList(l)
      setDiag(d)
    }, setError)
  }
  useEffect(load, [status, range])
  // The filters live in the address, so a link or a reload shows the same list.
  const choose = (key: 'status' | 'range', value: string) => {
    const u = new URL(location.href)
    u.searchParams.set(key, value)
    history.replaceState(null, '', u)
    ;(key === 'status' ? setStatus : setRange)(value)
  }
  const entitled = diag?.account.anomalies_entitled_by_plan
  return html`<h1>Anomalies</h1>
    <p class="muted">Each stat's complete hours are compared with what that hour usually looks like (its daily or weekly cycle, where it has one); an hour far outside that range opens an incident, which closes after two normal hours.</p>
    <${ErrorNotice} error=${error} retry=${load} />
    ${
      !list || !diag
        ? error
          ? null
          : html`<${Loading} />`
        : entitled === false
          ? html`<div class="notice info" data-testid="plan-notice">Anomaly detection is part of the starter, pro and business plans. <a href="/billing">See plans</a></div>`
          : html`<h2>Incidents</h2>
        <div class="actions">
          <label>Show <select data-testid="incident-status" value=${status} onChange=${(e: Event) => choose('status', (e.target as HTMLSelectElement).value)}>
            ${STATUSES.map(([s, label]) => html`<option value=${s}>${label}</option>`)}</select></label>
          <div class="ranges" role="group" aria-label="Incidents of the last">${LIST_RANGES.map((r) => html`<button type="button" aria-pressed=${r === range ? 'true' : 'false'} onClick=${() => choose('range', r)}>${r}</button>`)}</div>
        </div>
        <${Incidents} anomalies=${list.anomalies} status=${status} range=${range} />
        <h2>Which stats are checked</h2>
        ${diag.evaluator.enabled ? null : html`<div class="notice info">No worker runs the hourly sweep right now: stats are not being checked.</div>`}
        <${DiagnosticsTable} d=${diag} />`
    }`
}

mount(AnomaliesPage)
