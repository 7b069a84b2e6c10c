// The stats list: every stat with its kind, last value, age of its last
// point, a 24 h sparkline and total/average, a filter box and the plan's
// usage. Polls adaptively, so a first point shows up without a reload.
import { api } from './lib/api.js'
import { age, num, when } from './lib/format.js'
import { usePoll } from './lib/poll.js'
import { Sparkline } from './lib/spark.js'
import { Empty, ErrorNotice, html, Loading, mount, useState } from './lib/ui.js'

interface Row {
  id: string
  name: string
  kind: 'counter' | 'gauge'
  description: string | null
  last_value: number | null
  last_point_at: string | null
  summary: { total?: number; average?: number | null; n: number }
  points: Array<{ t: number; value: number }>
  /** How many series (tag sets) the stat holds. */
  series: number
}
interface Dashboard {
  range: { from: string; to: string }
  stats: Row[]
}
interface Limit {
  used: number
  limit: number
}
interface Usage {
  plan: string
  stats: Limit
  points_today: Limit
  alerts: Limit
  retention_days: number
}

function Meter({ label, l }: { label: string; l: Limit }) {
  const share = l.limit ? Math.min(1, l.used / l.limit) : 0
  return html`<div class="card"><div class="small muted">${label}</div><div><strong>${l.used.toLocaleString('en-US')}</strong> of ${l.limit.toLocaleString('en-US')}</div>
    <div class="meter" role="meter" aria-label=${label} aria-valuemin="0" aria-valuemax=${l.limit} aria-valuenow=${l.used}><span class=${share >= 1 ? 'full' : ''} style=${{ width: `${(share * 100).toFixed(1)}%` }}></span></div></div>`
}

function StatsPage() {
  const [data, setData] = useState<Dashboard | null>(null)
  const [usage, setUsage] = useState<Usage | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [filter, setFilter] = useState(new URLSearchParams(location.search).get('q') ?? '')
  const [, setNow] = useState(0)

  usePoll(async () => {
    try {
      const [d, u] = await Promise.all([api<Dashboard>('GET', '/api/v1/dashboard?range=24h'), api<Usage>('GET', '/api/v1/usage')])
      setData(d)
      setUsage(u)
      setError(null)
    } catch (err) {
      setError(err)
    }
    setNow(Date.now()) // ages move on even when nothing else changed
  }, [])

  const q = filter.trim().toLowerCase()
  const rows = data?.stats.filter((s) => !q || s.name.toLowerCase().includes(q) || (s.description ?? '').toLowerCase().includes(q)) ?? []
  const from = data ? Date.parse(data.range.from) / 1000 : 0
  const to = data ? Date.parse(data.range.to) / 1000 : 0
  const onFilter = (e: any) => {
    setFilter(e.currentTarget.value)
    const u = new URL(location.href)
    if (e.currentTarget.value) u.searchParams.set('q', e.currentTarget.value)
    else u.searchParams.delete('q')
    history.replaceState(null, '', u)
  }

  const deleted = new URLSearchParams(location.search).get('deleted')
  return html`<h1>Stats</h1>
    ${deleted ? html`<div class="notice ok" role="status">“${deleted}” and its points were deleted.</div>` : null}
    ${
      usage
        ? html`<section class="usage" aria-label="Plan usage">
      <${Meter} label="Tracked stats" l=${usage.stats} /><${Meter} label="Points today (UTC)" l=${usage.points_today} /><${Meter} label="Alerts" l=${usage.alerts} />
    </section>
    ${usage.plan === 'free' ? html`<p class="small muted">Free plan: ${usage.retention_days} days of history. Paid plans raise every limit and add anomaly detection.</p>` : null}`
        : null
    }
    <${ErrorNotice} error=${error} />
    ${
      data === null
        ? error
          ? null
          : html`<${Loading} what="Loading your stats…" />`
        : data.stats.length === 0
          ? html`<${Empty}><p><strong>No stats yet.</strong> A stat appears with its first point.</p>
          <p><a href="/keys">Create an API key</a> and run the <code>curl</code> shown there; this page updates by itself within seconds.</p><//>`
          : html`<div class="actions"><label for="filter" class="sr-only">Filter stats</label>
          <input id="filter" class="filter" type="search" placeholder="Filter by name or description" value=${filter} onInput=${onFilter} />
          <span class="small muted" aria-live="polite">${rows.length} of ${data.stats.length} stats</span></div>
        ${
          rows.length === 0
            ? html`<${Empty}>No stat matches “${filter}”.<//>`
            : html`<div class="table-wrap"><table class="stack">
          <thead><tr><th>Stat</th><th>Kind</th><th class="num">Last value</th><th>Last point</th><th>Last 24 h</th><th class="num">24 h total / average</th></tr></thead>
          <tbody>${rows.map(
            (s) => html`<tr key=${s.id}>
            <td data-label="Stat"><a class="row-title" href=${`/stats/${encodeURIComponent(s.name)}`}>${s.name}</a>${s.series > 1 ? html` <span class="small muted" data-series>${s.series} series</span>` : null}${s.description ? html`<div class="small muted">${s.description}</div>` : null}</td>
            <td data-label="Kind"><span class="kind">${s.kind}</span></td>
            <td data-label="Last value" class="num">${num(s.last_value)}</td>
            <td data-label="Last point">${age(s.last_point_at)}</td>
            <td data-label="Last 24 h"><${Sparkline} points=${s.points} from=${from} to=${to} label=${`${s.name}, last 24 hours`} /></td>
            <td data-label="24 h total / average" class="num">${s.kind === 'counter' ? num(s.summary.total) : num(s.summary.average)}</td>
          </tr>`,
          )}</tbody></table></div>
        <p class="small muted" data-window>Last 24 h: since ${when(data.range.from)}, the window the stat pages and embeds use for 24 h.</p>`
        }`
    }`
}

mount(StatsPage)
