// Anomalies (interface 4.7, 4.8): the open incidents with their numbers, and
// per stat whether the detector scores it and, if not, why in plain words.
import type { AnomalyJson, DiagnosticsJson, StatDiagnosticsJson } from '../../../shared/anomalies/schema.js'
import type { z } from 'zod'
import { api } from './lib/api.js'
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
  return s.state === 'evaluated' ? 'Checked every hour: a spike or dip will open an incident.' : 'Ready: it will be checked at the next hourly sweep.'
}

const v = (x: number) => html`<span title=${full(x)}>${num(x)}</span>`

function Incidents({ anomalies }: { anomalies: Anomaly[] }) {
  if (!anomalies.length) return html`<${Empty}><p>No open incidents: every checked stat is within its normal range.</p><//>`
  return html`<div class="table-wrap"><table class="stack" data-testid="incidents"><thead><tr><th>Stat</th><th>What</th><th>Since</th><th class="num">Observed</th><th class="num">Expected</th><th class="num">Normal range</th></tr></thead><tbody>
    ${anomalies.map((a) => html`<tr key=${a.id}><td data-label="Stat" class="row-title"><a href=${`/stats/${encodeURIComponent(a.stat_name)}`}>${a.stat_name}</a></td>
      <td data-label="What">${a.level_shift ? `Level shift (${a.direction === 'spike' ? 'up' : 'down'})` : a.direction === 'spike' ? 'Spike' : 'Dip'}<div class="small muted">${a.explanation}</div></td>
      <td data-label="Since" class="small">${when(a.started_at)}</td>
      <td data-label="Observed" class="num">${v(a.peak.observed)}</td><td data-label="Expected" class="num">${v(a.peak.expected)}</td>
      <td data-label="Normal range" class="num">${v(a.peak.lower)} – ${v(a.peak.upper)}</td></tr>`)}
  </tbody></table></div>`
}

function DiagnosticsTable({ d }: { d: DiagnosticsJson }) {
  if (!d.stats.length) return html`<${Empty}><p>No stats yet. Send points and each stat is listed here with whether it is checked.</p><//>`
  return html`<div class="table-wrap"><table class="stack" data-testid="diagnostics"><thead><tr><th>Stat</th><th>Checked</th><th>Why</th><th>Last checked</th></tr></thead><tbody>
    ${d.stats.map((s) => html`<tr key=${s.stat_name}><td data-label="Stat" class="row-title"><a href=${`/stats/${encodeURIComponent(s.stat_name)}`}>${s.stat_name}</a></td>
      <td data-label="Checked">${s.can_fire ? 'yes' : 'no'}</td>
      <td data-label="Why">${verdict(s)}<details><summary class="small">Details</summary><p class="small muted">${s.explanation}</p></details></td>
      <td data-label="Last checked" class="small">${when(s.last_evaluated_at)}</td></tr>`)}
  </tbody></table></div>
  ${d.account.truncated ? html`<p class="small muted">Showing ${d.account.stats_reported} of ${d.account.stats_total} stats.</p>` : null}`
}

function AnomaliesPage() {
  const [list, setList] = useState<{ anomalies: Anomaly[] } | null>(null)
  const [diag, setDiag] = useState<DiagnosticsJson | null>(null)
  const [error, setError] = useState<unknown>(null)
  const load = () => {
    setError(null)
    setList(null)
    setDiag(null)
    Promise.all([api<{ anomalies: Anomaly[] }>('GET', '/api/v1/anomalies?status=open&limit=100'), api<DiagnosticsJson>('GET', '/api/v1/anomalies/diagnostics?limit=100')])
      .then(([l, d]) => { setList(l); setDiag(d) }, setError)
  }
  useEffect(load, [])
  const entitled = diag?.account.anomalies_entitled_by_plan
  return html`<h1>Anomalies</h1>
    <p class="muted">Each stat's complete hours are compared with its normal range; a spike or dip outside it opens an incident.</p>
    <${ErrorNotice} error=${error} retry=${load} />
    ${!list || !diag ? (error ? null : html`<${Loading} />`)
      : entitled === false ? html`<div class="notice info" data-testid="plan-notice">Anomaly detection is part of the starter, pro and business plans. <a href="/billing">See plans</a></div>`
      : html`<h2>Open incidents</h2><${Incidents} anomalies=${list.anomalies} />
        <h2>Which stats are checked</h2>
        ${diag.evaluator.enabled ? null : html`<div class="notice info">No worker runs the hourly sweep right now: stats are not being checked.</div>`}
        <${DiagnosticsTable} d=${diag} />`}`
}

mount(AnomaliesPage)
