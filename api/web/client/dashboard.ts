// One dashboard: a chart per card, the card's stats overlaid on one time axis (a second axis when they are
// not one quantity), a range for the whole dashboard that a card may override, the crosshair shared across
// cards, a legend entry clicked to show that stat alone; cards added, reordered and removed here. Polls
// like the stat page: the data read is one request for every card (GET /api/v1/dashboards/:id/data).
import { RANGE_NAMES } from '../../../shared/stats/ranges.js'
import { api, ApiError, pageData } from './lib/api.js'
import { drawOverlay, followWidth, overlayData, zoneWords, type Bucket } from './lib/chart.js'
import { age } from './lib/format.js'
import { usePoll } from './lib/poll.js'
import { Empty, ErrorNotice, html, Loading, mount, useLayoutEffect, useRef, useState } from './lib/ui.js'
import type uPlot from 'uplot'
import type { Card, Dashboard } from './dashboards.js'

interface CardData {
  id: string
  range: { requested_range: string; from: string; to: string; bucket_seconds: number }
  series: Array<{
    name: string
    kind: 'counter' | 'gauge'
    points: Bucket[]
    unit?: string | null
    tags?: Record<string, string>
    other?: true
  }>
}

/** A card's line name: a group-by card draws one line per group, named by its tag (`requests host=web1`). */
const lineName = (s: CardData['series'][number]) =>
  s.other
    ? `${s.name} (other)`
    : s.tags
      ? `${s.name} ${Object.entries(s.tags)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`
      : s.name
interface Data {
  dashboard: Dashboard
  cards: CardData[]
}

const id = pageData.dashboard ?? ''
const path = `/api/v1/dashboards/${encodeURIComponent(id)}`
const SYNC = `dashboard-${id}`

/**
 * The cards' width, read once for all the charts drawn in one go: the grid's columns are equal, and every
 * read after a chart is inserted would lay the whole page out again (a dozen layouts cost more than the
 * dozen charts' drawing).
 */
let cardWidth: number | null = null
function widthOfCards(el: HTMLElement): number {
  if (cardWidth === null) {
    cardWidth = el.clientWidth
    queueMicrotask(() => {
      cardWidth = null
    })
  }
  return cardWidth
}

function Chart({ card, data }: { card: Card; data: CardData }) {
  const ref = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | null>(null)
  const drawnWith = useRef<CardData | null>(null)
  const input = () => ({
    from: Date.parse(data.range.from) / 1000,
    to: Date.parse(data.range.to) / 1000,
    bucket: data.range.bucket_seconds,
    series: data.series.map((s) => ({ ...s, name: lineName(s) })),
  })
  // A new chart only when what it shows changes (its stats, its range); a poll only gives it new data,
  // so a stat isolated by a click stays isolated and the crosshair stays put.
  const shape = `${data.series.map((s) => `${lineName(s)}:${s.unit ?? ''}`).join('|')}@${data.range.requested_range}`
  useLayoutEffect(() => {
    const el = ref.current!
    const p = drawOverlay(el, input(), { sync: SYNC, width: widthOfCards(el) })
    plot.current = p
    drawnWith.current = data
    const stop = followWidth(el, p, (w) => (w < 500 ? 200 : 240))
    return () => {
      stop()
      p.destroy()
      plot.current = null
    }
  }, [shape])
  useLayoutEffect(() => {
    // A chart just made already holds this data: drawing it again would double the first paint's work.
    if (drawnWith.current !== data) plot.current?.setData(overlayData(input()))
    drawnWith.current = data
    ref.current!.dataset.points = String(data.series.reduce((n, s) => n + s.points.length, 0)) // buckets drawn (the browser tests wait for it)
  }, [data])
  return html`<div class="chart small-chart" ref=${ref} data-card=${card.id} role="img" aria-label=${`Chart of ${data.series.map((s) => (s.unit ? `${lineName(s)} (${s.unit})` : lineName(s))).join(', ')} over ${data.range.requested_range}; ${zoneWords}`}></div>`
}

function CardView({
  card,
  data,
  index,
  count,
  stats,
  save,
}: {
  card: Card
  data?: CardData
  index: number
  count: number
  stats: string[] | null
  save: (change: (cards: Card[]) => Card[]) => Promise<void>
}) {
  const [adding, setAdding] = useState('')
  const move = (to: number) =>
    save((cards) => {
      const out = cards.filter((c) => c.id !== card.id)
      out.splice(to, 0, card)
      return out
    })
  // A title that was only the stats' names follows them (sent without one, the server names the card again).
  const named = card.title !== card.stats.join(', ')
  const update = (patch: Partial<Card>) =>
    save((cards) =>
      cards.map((c) => (c.id === card.id ? { ...c, ...(patch.stats && !named ? { title: undefined as never } : {}), ...patch } : c)),
    )
  const others = (stats ?? []).filter((s) => !card.stats.includes(s))
  return html`<section class="card dash-card" aria-label=${card.title} data-testid="dash-card">
    <div class="dash-card-head"><h2>${card.title}</h2>
      <div class="dash-card-tools">
        <label class="sr-only" for=${`range-${card.id}`}>Range of ${card.title}</label>
        <select id=${`range-${card.id}`} value=${card.range ?? ''} onChange=${(e: any) => update({ range: e.currentTarget.value || null })}>
          <option value="">Dashboard's range</option>${RANGE_NAMES.map((r) => html`<option value=${r}>${r}</option>`)}</select>
        <button type="button" class="secondary icon" disabled=${index === 0} onClick=${() => move(index - 1)} aria-label=${`Move ${card.title} up`} title="Move up">↑</button>
        <button type="button" class="secondary icon" disabled=${index === count - 1} onClick=${() => move(index + 1)} aria-label=${`Move ${card.title} down`} title="Move down">↓</button>
        <button type="button" class="secondary icon" onClick=${() => save((cards) => cards.filter((c) => c.id !== card.id))} aria-label=${`Remove ${card.title}`} title="Remove the card">✕</button>
      </div></div>
    ${data ? html`<${Chart} card=${card} data=${data} />` : html`<${Loading} />`}
    <div class="dash-card-foot small">
      ${card.stats.length > 1 ? card.stats.map((s) => html`<button type="button" class="link" onClick=${() => update({ stats: card.stats.filter((x) => x !== s) })} aria-label=${`Take ${s} off ${card.title}`}>${s} ✕</button> `) : html`<a href=${`/stats/${encodeURIComponent(card.stats[0])}`}>${card.stats[0]}</a> `}
      ${
        card.stats.length < 5 && others.length
          ? html`<form class="inline-add" onSubmit=${(e: Event) => {
              e.preventDefault()
              if (adding) {
                setAdding('')
                void update({ stats: [...card.stats, adding] })
              }
            }}>
        <label class="sr-only" for=${`add-${card.id}`}>Overlay another stat on ${card.title}</label>
        <select id=${`add-${card.id}`} value=${adding} onChange=${(e: any) => setAdding(e.currentTarget.value)}><option value="">Overlay a stat…</option>${others.map((s) => html`<option value=${s}>${s}</option>`)}</select>
        <button type="submit" class="secondary" disabled=${!adding}>Add</button></form>`
          : null
      }
    </div></section>`
}

function DashboardPage() {
  const [data, setData] = useState<Data | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [saveError, setSaveError] = useState<unknown>(null)
  const [stats, setStats] = useState<string[] | null>(null)
  const [adding, setAdding] = useState('')
  const [renaming, setRenaming] = useState<string | null>(null)
  const asked = new URLSearchParams(location.search).get('range')
  const load = async () => {
    try {
      setData(await api<Data>('GET', `${path}/data${asked ? `?range=${encodeURIComponent(asked)}` : ''}`))
      setError(null)
    } catch (err) {
      setError(err)
    }
  }
  usePoll(load, [])
  useLayoutEffect(() => {
    api<{ stats: Array<{ name: string }> }>('GET', '/api/v1/stats').then(
      (r) => setStats(r.stats.map((s) => s.name)),
      () => setStats([]),
    )
  }, [])

  const patch = async (body: Record<string, unknown>) => {
    setSaveError(null)
    try {
      await api('PATCH', path, body)
      await load()
    } catch (err) {
      setSaveError(err)
    }
  }
  // The whole list goes back in its new order; kept cards carry their ids.
  const save = (change: (cards: Card[]) => Card[]) =>
    patch({
      cards: change(data!.dashboard.cards).map((c) => ({
        id: c.id,
        title: c.title,
        stats: c.stats,
        range: c.range,
        filter: c.filter ?? null,
        group_by: c.group_by ?? null,
      })),
    })
  const pickRange = (r: string) => {
    history.replaceState(null, '', location.pathname) // the dashboard's own range from now on
    void patch({ range: r })
  }
  const remove = async () => {
    if (!confirm(`Delete the dashboard “${data!.dashboard.name}”? Its stats stay.`)) return
    try {
      await api('DELETE', path)
      location.assign(`/dashboards?deleted=${encodeURIComponent(data!.dashboard.name)}`)
    } catch (err) {
      setSaveError(err)
    }
  }

  if (error instanceof ApiError && error.status === 404) {
    return html`<h1>Dashboard</h1><${ErrorNotice} error=${error} /><p>It may have been deleted. <a href="/dashboards">Your dashboards</a>.</p>`
  }
  if (!data)
    return html`<p class="small"><a href="/dashboards">← Dashboards</a></p>${error ? html`<${ErrorNotice} error=${error} />` : html`<${Loading} what="Loading the dashboard…" />`}`
  const d = data.dashboard
  const byId = new Map(data.cards.map((c) => [c.id, c]))
  const range = asked ?? d.range
  return html`<p class="small"><a href="/dashboards">← Dashboards</a></p>
    ${
      renaming === null
        ? html`<h1>${d.name} <button type="button" class="link small" onClick=${() => setRenaming(d.name)}>Rename</button></h1>`
        : html`<form class="actions" onSubmit=${(e: Event) => {
            e.preventDefault()
            void patch({ name: renaming }).then(() => setRenaming(null))
          }}>
          <label class="sr-only" for="rename">Name</label><input id="rename" value=${renaming} maxlength="100" onInput=${(e: any) => setRenaming(e.currentTarget.value)} />
          <button type="submit">Save the name</button><button type="button" class="secondary" onClick=${() => setRenaming(null)}>Cancel</button></form>`
    }
    <div class="ranges" role="group" aria-label="Range of the dashboard">${RANGE_NAMES.map((r) => html`<button type="button" aria-pressed=${r === range ? 'true' : 'false'} onClick=${() => pickRange(r)}>${r}</button>`)}</div>
    <${ErrorNotice} error=${error} /><${ErrorNotice} error=${saveError} />
    ${
      d.cards.length === 0
        ? html`<${Empty}>No cards yet. Add a stat below, or from a stat's page (“Add to a dashboard”).<//>`
        : html`<div class="dash-grid">${d.cards.map((c, i) => html`<${CardView} key=${c.id} card=${c} data=${byId.get(c.id)} index=${i} count=${d.cards.length} stats=${stats} save=${save} />`)}</div>
        <p class="small muted">Move over one chart: every card shows the same moment. Click a stat in a card's legend to show it alone, again to show all. Counters are summed per bucket, gauges averaged; stats of different units, or counters beside gauges, read on two axes, the legend saying which (left, right). Updated ${age(data.cards[0]?.range.to ?? null)}.</p>`
    }
    <form class="actions" onSubmit=${(e: Event) => {
      e.preventDefault()
      if (adding) {
        setAdding('')
        void save((cards) => [...cards, { stats: [adding] } as Card])
      }
    }}>
      <label class="sr-only" for="add-card">Stat for a new card</label>
      <select id="add-card" class="filter" value=${adding} onChange=${(e: any) => setAdding(e.currentTarget.value)}><option value="">Add a card for a stat…</option>${(stats ?? []).map((s) => html`<option value=${s}>${s}</option>`)}</select>
      <button type="submit" disabled=${!adding}>Add the card</button></form>
    <div class="actions"><button type="button" class="danger" onClick=${remove}>Delete this dashboard</button></div>`
}

mount(DashboardPage)
