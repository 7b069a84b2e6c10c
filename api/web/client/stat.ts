// One stat: range buttons (docs/decisions.md §6), the chart with the
// previous period dashed, a summary (this period, previous, difference, %),
// the description, share and embed, export, its alerts, and delete.
import { PLANS, type PlanName } from '../../../shared/plans.js'
import { RANGE_NAMES, RANGES as RANGE_TABLE, type RangeName } from '../../../shared/stats/ranges.js'
import { api, ApiError, fieldErrors, pageData, statPath } from './lib/api.js'
import { drawChart, drawOverlay, followWidth, PALETTE, zoneWords, type Band, type Bucket } from './lib/chart.js'
import { age, full, num, pct, when } from './lib/format.js'
import type uPlot from 'uplot'
import { usePoll } from './lib/poll.js'
import { Badge, CopyButton, ErrorNotice, Field, html, Loading, mount, useEffect, useLayoutEffect, useRef, useState } from './lib/ui.js'

// The server's own table of ranges and buckets (bundled: it imports nothing but the error constructors).
const RANGES = RANGE_NAMES
const SECONDS = (r: string) => RANGE_TABLE[r as RangeName].seconds
const BUCKET = (r: string) => RANGE_TABLE[r as RangeName].bucket
const EMBED_RANGES = ['1h', '6h', '24h', '7d', '30d']
/** The percentile lines a gauge's chart can draw beside its average (docs/decisions.md §20). */
const PERCENTILE_KEYS = ['p50', 'p95', 'p99'] as const
const name = pageData.stat ?? ''

interface Stat {
  id: string
  name: string
  kind: 'counter' | 'gauge'
  description: string | null
  unit?: string | null
  higher_is?: 'better' | 'worse' | 'neither'
  created_at: string
}
interface Group {
  tags: Record<string, string>
  other?: true
  points: Bucket[]
}

interface Detail {
  stat: Stat
  /** With group_by: one per value of the key (docs/decisions.md §24). */
  groups?: Group[]
  range: {
    requested_range: string
    from: string
    to: string
    bucket_seconds: number
    retention_days?: number
    range_clamped_by_retention?: boolean
  }
  points: Bucket[]
}
interface Alert {
  id: string
  stat_name: string
  condition_type: string
  threshold: number
  window_minutes: number
  channel: string
  state: string
  last_value: number | null
}

function aggregate(kind: Stat['kind'], pts: Bucket[]) {
  const n = pts.reduce((s, p) => s + p.n, 0)
  if (kind === 'counter') return { value: pts.reduce((s, p) => s + p.value, 0), n }
  return { value: n ? pts.reduce((s, p) => s + p.value * p.n, 0) / n : null, n }
}

/** A change's colour: green when it is good news, red when bad, none when the stat says neither way is. */
export function changeClass(diff: number | null, higherIs: Stat['higher_is']): string {
  if (diff === null || diff === 0 || !higherIs || higherIs === 'neither') return ''
  return diff > 0 === (higherIs === 'better') ? 'up' : 'down'
}

function Summary({ stat, cur, prev }: { stat: Stat; cur: Bucket[]; prev: Bucket[] }) {
  const kind = stat.kind
  const a = aggregate(kind, cur),
    b = aggregate(kind, prev)
  const diff = a.value !== null && b.value !== null ? a.value - b.value : null
  const word = kind === 'counter' ? 'Total' : 'Average'
  const cls = changeClass(diff, stat.higher_is)
  const unit = stat.unit ? html` <span class="unit">${stat.unit}</span>` : null
  return html`<dl class="summary" aria-label="Summary">
    <div><dt>${word}, this period</dt><dd title=${a.value === null ? '' : full(a.value)}>${num(a.value)}${a.value === null ? null : unit}</dd></div>
    <div><dt>${word}, previous period</dt><dd title=${b.value === null ? '' : full(b.value)}>${num(b.value)}${b.value === null ? null : unit}</dd></div>
    <div><dt>Difference</dt><dd class=${cls}>${diff === null ? '—' : `${diff > 0 ? '+' : ''}${num(diff)}`}${diff === null ? null : unit}</dd></div>
    <div><dt>Change</dt><dd class=${cls}>${a.value === null || b.value === null ? '—' : pct(a.value, b.value)}</dd></div>
    <div><dt>Observations</dt><dd>${a.n.toLocaleString('en-US')}</dd></div>
  </dl>`
}

/** The caption's words for the hours the back-test flagged (red markers on the chart). */
function flaggedNote(detail: Detail, band: Band[]): string {
  const n = detail.range.bucket_seconds === 3600 ? band.filter((b) => b.flagged).length : 0
  return n ? ` Red dots: ${n === 1 ? 'the hour' : `the ${n} hours`} the detector flagged as unusual (see Anomalies).` : ''
}

/**
 * Carries the cursor of a chart's plot to the plot drawn after it: each poll draws a chart anew (its window moves with
 * the clock), and without this the value under a mouse held still went blank until the mouse moved.
 */
function useCarriedCursor() {
  const cursor = useRef<{ left: number; top: number } | null>(null)
  return {
    restore(plot: uPlot) {
      if (cursor.current) plot.setCursor(cursor.current)
    },
    keep(plot: uPlot) {
      const { left, top } = plot.cursor
      // uPlot puts the cursor at negative positions once the mouse has left the plot.
      cursor.current = left !== undefined && top !== undefined && left >= 0 && top >= 0 ? { left, top } : null
    },
  }
}

function Chart({ detail, prev, band, unit }: { detail: Detail; prev: Bucket[]; band: Band[]; unit?: string | null }) {
  const ref = useRef<HTMLDivElement>(null)
  const cursor = useCarriedCursor()
  // Drawn as soon as the element exists, not an animation frame later.
  useLayoutEffect(() => {
    const el = ref.current!
    const from = Date.parse(detail.range.from) / 1000
    const plot = drawChart(
      el,
      {
        kind: detail.stat.kind,
        from,
        to: Date.parse(detail.range.to) / 1000,
        bucket: detail.range.bucket_seconds,
        current: detail.points,
        previous: prev,
        shift: SECONDS(detail.range.requested_range),
        unit: unit,
        band: detail.range.bucket_seconds === 3600 ? band : [],
        percentiles: detail.points.some((p) => p.p50 !== undefined) ? PERCENTILE_KEYS : [],
      },
      detail.stat.name,
    )
    const stop = followWidth(el, plot)
    cursor.restore(plot)
    el.dataset.drawn = String(detail.points.length) // buckets drawn (the browser tests wait for it)
    return () => {
      cursor.keep(plot)
      stop()
      plot.destroy()
    }
  }, [detail, prev, band, unit])
  return html`<div class="chart" ref=${ref} role="img" aria-label=${`Chart of ${detail.stat.name}${unit ? ` in ${unit}` : ''}: this period solid, previous period dashed${band.length && detail.range.bucket_seconds === 3600 ? ', the normal range shaded' : ''}; ${zoneWords}`}></div>`
}

/** A group-by read drawn one line per value, with a legend naming the values. */
function GroupChart({ detail, by }: { detail: Detail; by: string }) {
  const ref = useRef<HTMLDivElement>(null)
  const groups = detail.groups ?? []
  const label = (g: Group) => (g.other ? 'other' : g.tags[by])
  const cursor = useCarriedCursor()
  useLayoutEffect(() => {
    const el = ref.current
    if (!el || !groups.length) return
    const from = Date.parse(detail.range.from) / 1000
    const p = drawOverlay(el, {
      from,
      to: Date.parse(detail.range.to) / 1000,
      bucket: detail.range.bucket_seconds,
      series: groups.map((g) => ({ name: `${by}=${label(g)}`, kind: detail.stat.kind, points: g.points })),
    })
    const stop = followWidth(el, p)
    cursor.restore(p)
    return () => {
      cursor.keep(p)
      stop()
      p.destroy()
    }
  }, [detail, by])
  if (!groups.length) return html`<div class="notice info">No series of this stat has the tag ${by}.</div>`
  return html`<div class="chart" ref=${ref} role="img" aria-label=${`Chart of ${detail.stat.name} by ${by}: one line per value; ${zoneWords}`}></div>
    <ul class="legend small" data-testid="group-legend">${groups.map(
      (g, i) => html`<li><span style=${{ color: PALETTE[i % PALETTE.length] }}>■</span> ${by}=${label(g)}</li>`,
    )}</ul>`
}

/** The filter (host:web1,region:eu) and group-by of the stat page, from the stat's tag keys. */
function TagControls({
  name,
  filter,
  by,
  onChange,
}: {
  name: string
  filter: string
  by: string
  onChange: (f: string, b: string) => void
}) {
  const [keys, setKeys] = useState<string[]>([])
  const [text, setText] = useState(filter)
  useEffect(() => {
    api<{ tags: Array<{ key: string }> }>('GET', `${statPath(name)}/tags`).then(
      (r) => setKeys(r.tags.map((t) => t.key)),
      () => setKeys([]),
    )
  }, [name])
  if (!keys.length && !filter && !by) return null
  return html`<form class="actions" onSubmit=${(e: Event) => {
    e.preventDefault()
    onChange(text.trim(), by)
  }}>
    <label class="small">Filter <input name="filter" placeholder="host:web1,region:eu" value=${text} onInput=${(e: any) => setText(e.currentTarget.value)} /></label>
    <button type="submit" class="secondary">Apply</button>
    <label class="small">Group by <select name="group_by" value=${by} onChange=${(e: any) => onChange(text.trim(), e.currentTarget.value)}>
      <option value="">(none)</option>${keys.map((k) => html`<option value=${k}>${k}</option>`)}</select></label>
  </form>`
}

function Description({ stat, onSaved }: { stat: Stat; onSaved: (s: Stat) => void }) {
  const [editing, setEditing] = useState(false)
  const [text, setText] = useState(stat.description ?? '')
  const [error, setError] = useState<unknown>(null)
  const save = async (e: Event) => {
    e.preventDefault()
    setError(null)
    try {
      const res = await api<{ stat: Stat }>('PATCH', statPath(stat.name), { description: text.trim() === '' ? null : text })
      onSaved(res.stat)
      setEditing(false)
    } catch (err) {
      setError(err)
    }
  }
  if (!editing) {
    return html`<p>${stat.description ? stat.description : html`<span class="muted">No description.</span>`}${' '}
      <button type="button" class="link" onClick=${() => {
        setText(stat.description ?? '')
        setEditing(true)
      }}>${stat.description ? 'Edit description' : 'Add a description'}</button></p>`
  }
  const fields = fieldErrors(error)
  return html`<form onSubmit=${save}>
    <${Field} id="description" label="Description" hint=${`At most 500 characters (${text.length} now). Leave empty to clear it.`} error=${fields.description}>
      <textarea id="description" value=${text} onInput=${(e: any) => setText(e.currentTarget.value)} aria-invalid=${fields.description ? 'true' : undefined}></textarea>
    <//>
    ${fields.description ? null : html`<${ErrorNotice} error=${error} />`}
    <div class="actions"><button type="submit">Save description</button><button type="button" class="secondary" onClick=${() => setEditing(false)}>Cancel</button></div>
  </form>`
}

const DIRECTION_WORDS = { better: 'higher is better', worse: 'higher is worse', neither: 'neither way is better' } as const

/** The unit and which way is good news: the axis label, the figures' unit, the change's colour. */
function Meaning({ stat, onSaved }: { stat: Stat; onSaved: (s: Stat) => void }) {
  const [editing, setEditing] = useState(false)
  const [unit, setUnit] = useState(stat.unit ?? '')
  const [higherIs, setHigherIs] = useState<string>(stat.higher_is ?? 'neither')
  const [error, setError] = useState<unknown>(null)
  const save = async (e: Event) => {
    e.preventDefault()
    setError(null)
    try {
      onSaved(
        (await api<{ stat: Stat }>('PATCH', statPath(stat.name), { unit: unit.trim() === '' ? null : unit, higher_is: higherIs })).stat,
      )
      setEditing(false)
    } catch (err) {
      setError(err)
    }
  }
  if (!editing) {
    return html`<p class="small muted" data-testid="meaning">${stat.unit ? `In ${stat.unit}; ` : 'No unit; '}${DIRECTION_WORDS[stat.higher_is ?? 'neither']}.${' '}
      <button type="button" class="link" onClick=${() => {
        setUnit(stat.unit ?? '')
        setHigherIs(stat.higher_is ?? 'neither')
        setEditing(true)
      }}>Set the unit and direction</button></p>`
  }
  const fields = fieldErrors(error)
  return html`<form onSubmit=${save} class="grid2">
    <${Field} id="unit" label="Unit" hint="Shown on the axis and beside the figures (ms, requests, EUR). Empty: none." error=${fields.unit}>
      <input id="unit" value=${unit} maxlength="20" onInput=${(e: any) => setUnit(e.currentTarget.value)} aria-invalid=${fields.unit ? 'true' : undefined} />
    <//>
    <${Field} id="higher-is" label="When it goes up" hint="Colours the change: green for good news, red for bad.">
      <select id="higher-is" value=${higherIs} onChange=${(e: any) => setHigherIs(e.currentTarget.value)}>
        <option value="better">Higher is better (sign-ups)</option><option value="worse">Higher is worse (latency, errors)</option><option value="neither">Neither</option></select>
    <//>
    ${fields.unit ? null : html`<${ErrorNotice} error=${error} />`}
    <div class="actions"><button type="submit">Save</button><button type="button" class="secondary" onClick=${() => setEditing(false)}>Cancel</button></div>
  </form>`
}

function Share({ stat }: { stat: Stat }) {
  const [share, setShare] = useState<{ token: string; embed_url: string } | null>(null)
  // Whether the stat is shared (and since when), as the server says: "Revoke sharing" only when it is.
  const [since, setSince] = useState<string | null | undefined>(undefined)
  const [error, setError] = useState<unknown>(null)
  const [notice, setNotice] = useState('')
  const [range, setRange] = useState('24h')
  useEffect(() => {
    api<{ share: { created_at: string } | null }>('GET', `${statPath(stat.name)}/share`).then(
      (r) => setSince(r.share?.created_at ?? null),
      setError,
    )
  }, [stat.name])
  const rotate = async () => {
    setError(null)
    if (
      since &&
      !confirm('Rotate the share token? Pages embedding the current link stop showing the chart until you give them the new one.')
    )
      return
    try {
      const made = (await api<{ share: { token: string; embed_url: string; created_at: string } }>('POST', `${statPath(stat.name)}/share`))
        .share
      setShare(made)
      setNotice(since ? 'New token issued; the old link no longer works.' : '')
      setSince(made.created_at)
    } catch (err) {
      setError(err)
    }
  }
  const revoke = async () => {
    setError(null)
    if (!confirm('Revoke public sharing? Every embed of this stat stops showing the chart at once.')) return
    try {
      await api('DELETE', `${statPath(stat.name)}/share`)
      setShare(null)
      setSince(null)
      setNotice('Sharing revoked: the embed link no longer works.')
    } catch (err) {
      setError(err)
    }
  }
  const url = share ? `${share.embed_url}&range=${range}` : ''
  const snippet = share
    ? `<iframe src="${url}" width="600" height="280" style="border:0" title="${stat.name.replace(/"/g, '&quot;')}"></iframe>`
    : ''
  return html`<section aria-labelledby="share-title"><h2 id="share-title">Share and embed</h2>
    <p class="muted small">A share token lets anyone with the link see this stat's chart (nothing else). The token is shown when it is created; rotating it ends the old link.</p>
    <${ErrorNotice} error=${error} />
    ${notice ? html`<div class="notice ok" role="status">${notice}</div>` : null}
    ${since && !share ? html`<p data-testid="shared-since">Shared since ${when(since)}. The link was shown when it was made; rotate the token for a new one.</p>` : null}
    <div class="actions"><button type="button" class="secondary" disabled=${since === undefined} onClick=${rotate}>${since ? 'Rotate the token' : 'Create a share link'}</button>
      ${since ? html`<button type="button" class="secondary" onClick=${revoke}>Revoke sharing</button>` : null}</div>
    ${
      share
        ? html`<div class="card">
      <label for="embed-range">Embed range</label>
      <select id="embed-range" value=${range} onChange=${(e: any) => setRange(e.currentTarget.value)}>${EMBED_RANGES.map((r) => html`<option value=${r}>${r}</option>`)}</select>
      <h3>Link</h3><pre data-testid="embed-url">${url}</pre>
      <h3>Iframe snippet</h3><pre data-testid="snippet">${snippet}</pre>
      <div class="actions"><${CopyButton} text=${snippet} label="Copy snippet" /><${CopyButton} text=${url} label="Copy link" /></div>
      <h3>Preview</h3><iframe class="embed" src=${url} title=${`Embed preview of ${stat.name}`}></iframe></div>`
        : null
    }
  </section>`
}

function StatAlerts({ stat }: { stat: Stat }) {
  const [alerts, setAlerts] = useState<Alert[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  usePoll(async () => {
    try {
      setAlerts((await api<{ alerts: Alert[] }>('GET', '/api/v1/alerts')).alerts.filter((a) => a.stat_name === stat.name))
      setError(null)
    } catch (err) {
      setError(err)
    }
  }, [stat.name])
  const create = `/alerts?stat=${encodeURIComponent(stat.name)}#create`
  return html`<section aria-labelledby="alerts-title"><h2 id="alerts-title">Alerts on this stat</h2>
    <${ErrorNotice} error=${error} />
    ${
      alerts === null
        ? error
          ? null
          : html`<${Loading} />`
        : alerts.length === 0
          ? html`<p class="muted">No alert watches this stat. <a href=${create}>Create one</a>.</p>`
          : html`<ul>${alerts.map(
              (
                a,
              ) => html`<li key=${a.id}><${Badge} state=${a.state} /> ${a.condition_type.replace('_', ' ')} ${a.condition_type === 'heartbeat' || a.condition_type === 'missing_data' ? `${a.window_minutes} min` : num(a.threshold)} → ${a.channel}
          ${a.last_value !== null ? html` <span class="muted small">(last value ${num(a.last_value)})</span>` : null}</li>`,
            )}</ul>
        <p><a href="/alerts">Manage alerts</a> · <a href=${create}>Create another</a></p>`
    }
  </section>`
}

/** A card for this stat on one of the account's dashboards, or on a new one; then the way to it. */
function AddToDashboard({ stat }: { stat: Stat }) {
  const [boards, setBoards] = useState<Array<{ id: string; name: string; cards: Array<{ id: string; stats: string[] }> }> | null>(null)
  const [pick, setPick] = useState('')
  const [newName, setNewName] = useState('')
  const [done, setDone] = useState<{ id: string; name: string } | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    api<{ dashboards: Array<{ id: string; name: string; cards: Array<{ id: string; stats: string[] }> }> }>(
      'GET',
      '/api/v1/dashboards',
    ).then((r) => {
      setBoards(r.dashboards)
      setPick(r.dashboards[0]?.id ?? 'new')
    }, setError)
  }, [])
  const add = async (e: Event) => {
    e.preventDefault()
    setError(null)
    try {
      const board = boards!.find((b) => b.id === pick)
      const d = board
        ? (
            await api<{ dashboard: { id: string; name: string } }>('PATCH', `/api/v1/dashboards/${board.id}`, {
              cards: [
                ...board.cards.map((c) => ({
                  id: c.id,
                  stats: c.stats,
                  title: (c as { title?: string }).title,
                  range: (c as { range?: string | null }).range,
                })),
                { stats: [stat.name] },
              ],
            })
          ).dashboard
        : (
            await api<{ dashboard: { id: string; name: string } }>('POST', '/api/v1/dashboards', {
              name: newName.trim() || stat.name,
              cards: [{ stats: [stat.name] }],
            })
          ).dashboard
      setDone(d)
    } catch (err) {
      setError(err)
    }
  }
  return html`<section aria-labelledby="dash-title"><h2 id="dash-title">Dashboards</h2>
    ${done ? html`<div class="notice ok" role="status">Added to <a href=${`/dashboards/${done.id}`}>${done.name}</a>.</div>` : null}
    <${ErrorNotice} error=${error} />
    ${
      boards === null
        ? error
          ? null
          : html`<${Loading} />`
        : html`<form class="actions" onSubmit=${add}>
      <label class="sr-only" for="dash-pick">Dashboard</label>
      <select id="dash-pick" class="filter" value=${pick} onChange=${(e: any) => setPick(e.currentTarget.value)}>
        ${boards.map((b) => html`<option value=${b.id}>${b.name}</option>`)}<option value="new">A new dashboard…</option></select>
      ${pick === 'new' ? html`<label class="sr-only" for="dash-new">Name of the new dashboard</label><input id="dash-new" class="filter" placeholder=${`Name (default: ${stat.name})`} value=${newName} maxlength="100" onInput=${(e: any) => setNewName(e.currentTarget.value)} />` : null}
      <button type="submit">Add to a dashboard</button></form>`
    }
  </section>`
}

/** What the delete dialog says it removes: the points counted, from the oldest (backfilled history included). */
function deletes(extent: { points: number; oldest: string | null; newest: string | null } | null | undefined): string {
  if (extent === undefined) return 'every point it holds (counting them…)'
  if (extent === null) return 'every point it holds'
  if (extent.points === 0) return 'its name; it holds no points yet'
  const count = `${full(extent.points)} point${extent.points === 1 ? '' : 's'}`
  return extent.points === 1
    ? `its ${count}, recorded ${when(extent.oldest)}`
    : `all ${count}, from the oldest (${when(extent.oldest)}) to the newest (${when(extent.newest)})`
}

function Delete({ stat }: { stat: Stat }) {
  const ref = useRef<HTMLDialogElement>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  // Read when the dialog opens: the count and the oldest point, which may predate the stat (an import).
  const [extent, setExtent] = useState<{ points: number; oldest: string | null; newest: string | null } | null | undefined>(undefined)
  const open = () => {
    setExtent(undefined)
    ref.current?.showModal()
    api<{ points: number; oldest: string | null; newest: string | null }>('GET', `${statPath(stat.name)}/extent`).then(setExtent, () =>
      setExtent(null),
    )
  }
  const del = async () => {
    setBusy(true)
    try {
      await api('DELETE', statPath(stat.name))
      location.assign(`/stats?deleted=${encodeURIComponent(stat.name)}`)
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return html`<section aria-labelledby="delete-title"><h2 id="delete-title">Delete</h2>
    <button type="button" class="danger" onClick=${open}>Delete this stat…</button>
    <dialog ref=${ref} aria-labelledby="delete-dialog-title">
      <h2 id="delete-dialog-title">Delete “${stat.name}”?</h2>
      <p data-testid="delete-extent">This removes the stat and <strong>${deletes(extent)}</strong>, and ends its share link. It cannot be undone.</p>
      <p class="muted small">Alerts that name this stat stay (they watch a name). A later write under the same name creates a new, empty stat.</p>
      <${ErrorNotice} error=${error} />
      <div class="actions"><button type="button" class="danger" disabled=${busy} onClick=${del}>Delete ${stat.name} and its points</button>
        <button type="button" class="secondary" onClick=${() => ref.current?.close()} autofocus>Keep it</button></div>
    </dialog></section>`
}

const asked = new URLSearchParams(location.search).get('range')
const initialRange: string = RANGES.includes(asked as never) ? asked! : '24h'
/** The first read of the initial range uses the window start the server preloaded it with. */
let ticked = false

/** The back-test replays a week of hours: asked again only once a new hour is complete, not on every poll. */
let bandCache: { hour: number; band: Promise<Band[]> } | null = null
function hourlyBand(): Promise<Band[]> {
  const hour = Math.floor(Date.now() / 3_600_000)
  if (bandCache?.hour !== hour) {
    const band = api<{ buckets: Array<{ t: number; lower: number | null; upper: number | null; anomalous: boolean }> }>(
      'GET',
      `/api/v1/anomalies/backtest?stat=${encodeURIComponent(name)}&range=7d`,
    ).then((r) =>
      r.buckets.flatMap((b) => (b.lower === null || b.upper === null ? [] : [{ t: b.t, lo: b.lower, hi: b.upper, flagged: b.anomalous }])),
    )
    bandCache = { hour, band }
    band.catch(() => {
      bandCache = null
    }) // asked again at the next poll; the chart stands without its band meanwhile
  }
  return bandCache!.band.catch(() => [] as Band[])
}

function StatPage() {
  const [range, setRange] = useState<string>(initialRange)
  const [detail, setDetail] = useState<Detail | null>(null)
  const [prev, setPrev] = useState<Bucket[]>([])
  const [error, setError] = useState<unknown>(null)
  const [stat, setStat] = useState<Stat | null>(null)
  const [band, setBand] = useState<Band[]>([])
  // Percentile lines, kept in the address like the range (a gauge's; a counter's bucket is a sum).
  const [withPct, setWithPct] = useState(new URLSearchParams(location.search).get('percentiles') === '1')
  const kindRef = useRef<string | undefined>(undefined)
  // Tags (docs/decisions.md §24): kept in the address like the range.
  const [tagFilter, setTagFilter] = useState(new URLSearchParams(location.search).get('filter') ?? '')
  const [groupBy, setGroupBy] = useState(new URLSearchParams(location.search).get('group_by') ?? '')
  const tagQuery = `${tagFilter ? `&filter=${encodeURIComponent(tagFilter)}` : ''}${groupBy ? `&group_by=${encodeURIComponent(groupBy)}` : ''}`
  // The back-test is hourly: its band is drawn only where the chart's buckets are hours too, on plans with detection;
  // and it is the whole stat's, so not over a filtered or grouped chart (an incident's "carried by" link opens one).
  const showBand = range === '7d' && !tagFilter && !groupBy && PLANS[pageData.plan as PlanName]?.anomalyDetection === true

  usePoll(
    async (stale) => {
      const previous = (fromMs: number) =>
        api<Detail>(
          'GET',
          `${statPath(name)}?from=${new Date(fromMs - SECONDS(range) * 1000).toISOString()}&to=${new Date(fromMs).toISOString()}${tagFilter ? `&filter=${encodeURIComponent(tagFilter)}` : ''}`,
        )
      try {
        // Both periods at once: the window's start is where the server will put it (aligned down to its bucket);
        // should the clocks disagree across a bucket edge, the previous period is asked again for the server's start.
        const fromServer = !ticked && range === initialRange && pageData.windowFrom ? Number(pageData.windowFrom) : NaN
        ticked = true
        const guess = fromServer || Math.floor((Date.now() / 1000 - SECONDS(range)) / BUCKET(range)) * BUCKET(range) * 1000
        const backtest = showBand ? hourlyBand() : Promise.resolve([] as Band[])
        // Percentiles are asked only of a gauge: on a first read of unknown kind, asked again once it is known.
        const read = (kind: string | undefined) =>
          api<Detail>(
            'GET',
            `${statPath(name)}?range=${range}${tagQuery}${withPct && kind === 'gauge' ? `&percentiles=${PERCENTILE_KEYS.map((k) => k.slice(1)).join(',')}` : ''}`,
          )
        let [d, p0, b] = await Promise.all([read(kindRef.current), previous(guess), backtest])
        if (withPct && kindRef.current === undefined && d.stat.kind === 'gauge') d = await read('gauge')
        kindRef.current = d.stat.kind
        const from = Date.parse(d.range.from)
        const p = from === guess ? p0 : await previous(from)
        if (stale()) return
        setDetail(d)
        setPrev(p.points)
        setBand(b)
        setStat((s) => s ?? d.stat)
        setError(null)
      } catch (err) {
        if (!stale()) setError(err)
      }
    },
    [range, withPct, tagFilter, groupBy],
  )

  const setTags = (f: string, b: string) => {
    setTagFilter(f)
    setGroupBy(b)
    const u = new URL(location.href)
    for (const [k, v] of [
      ['filter', f],
      ['group_by', b],
    ])
      if (v) u.searchParams.set(k, v)
      else u.searchParams.delete(k)
    history.replaceState(null, '', u)
  }

  const togglePct = (on: boolean) => {
    setWithPct(on)
    const u = new URL(location.href)
    if (on) u.searchParams.set('percentiles', '1')
    else u.searchParams.delete('percentiles')
    history.replaceState(null, '', u)
  }

  const pick = (r: string) => {
    setRange(r)
    const u = new URL(location.href)
    u.searchParams.set('range', r)
    history.replaceState(null, '', u)
  }

  if (error instanceof ApiError && error.status === 404) {
    return html`<h1>${name}</h1><${ErrorNotice} error=${error} /><p>It may have been deleted, or never received a point. <a href="/stats">Back to your stats</a>.</p>`
  }
  const s = stat ?? detail?.stat
  const exportHref = (format: string) => `${statPath(name)}/export?format=${format}&range=${range}`
  return html`<p class="small"><a href="/stats">← Stats</a></p>
    <h1>${name} ${s ? html`<span class="kind">${s.kind}</span>` : null}${s?.unit ? html` <span class="kind" data-testid="unit">${s.unit}</span>` : null}</h1>
    ${s ? html`<${Description} stat=${s} onSaved=${setStat} /><${Meaning} stat=${s} onSaved=${setStat} />` : null}
    <div class="ranges" role="group" aria-label="Range">${RANGES.map((r) => html`<button type="button" aria-pressed=${r === range ? 'true' : 'false'} onClick=${() => pick(r)}>${r}</button>`)}</div>
    ${s?.kind === 'gauge' ? html`<label class="small"><input type="checkbox" name="percentiles" checked=${withPct} onChange=${(e: any) => togglePct(e.currentTarget.checked)} /> Show p50, p95 and p99</label>` : null}
    <${TagControls} name=${name} filter=${tagFilter} by=${groupBy} onChange=${setTags} />
    <${ErrorNotice} error=${error} />
    ${
      detail === null
        ? error
          ? null
          : html`<${Loading} what="Loading the chart…" />`
        : html`
      ${detail.range.range_clamped_by_retention ? html`<div class="notice info">Your plan keeps ${detail.range.retention_days} days of history: this chart starts ${when(detail.range.from)}. <a href="/account">Plan limits</a></div>` : null}
      ${detail.points.length === 0 ? html`<div class="notice info">No points in the last ${range}. Pick a longer range, or send one.</div>` : null}
      ${groupBy && detail.groups ? html`<${GroupChart} detail=${detail} by=${groupBy} />` : html`<${Chart} detail=${detail} prev=${prev} band=${band} unit=${s?.unit} />`}
      <p class="small muted">Buckets of ${detail.range.bucket_seconds >= 3600 ? `${detail.range.bucket_seconds / 3600} h` : `${detail.range.bucket_seconds / 60} min`}, ${detail.stat.kind === 'counter' ? 'summed' : 'averaged'}; dashed: the ${range} before, shifted to line up.${band.length && detail.range.bucket_seconds === 3600 ? ' Shaded: the normal range the anomaly detector expected for each hour.' : ''}${flaggedNote(detail, band)}${detail.points.some((p) => p.p50 !== undefined) ? " Dotted: p50, p95 and p99 of each bucket's observations (within 1 %)." : ''} Updated ${age(detail.range.to)}.</p>
      <${Summary} stat=${s ?? detail.stat} cur=${detail.points} prev=${prev} />
      <p><a href=${`/stats/${encodeURIComponent(name)}/correlations`}>What moved with this?</a> <span class="small muted">Your other stats ranked by how closely they move with ${name}.</span></p>`
    }
    <section aria-labelledby="export-title"><h2 id="export-title">Export</h2>
      <p class="muted small">Raw observations of the last ${range}, within your plan's retention.</p>
      <div class="actions"><a class="button secondary" href=${exportHref('csv')} download>Download CSV</a><a class="button secondary" href=${exportHref('json')} download>Download JSON</a></div></section>
    ${s ? html`<${AddToDashboard} stat=${s} /><${StatAlerts} stat=${s} /><${Share} stat=${s} /><${Delete} stat=${s} />` : null}`
}

mount(StatPage)
