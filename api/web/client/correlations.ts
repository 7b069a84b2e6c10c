// "What moved with this?" (docs/decisions.md §12): the account's stats ranked by how
// strongly their hour-to-hour changes follow this stat's, and the chosen one overlaid on this one over the
// same hours, each on its own axis (the shapes are compared, not the sizes).
import { api, ApiError, pageData, statPath } from './lib/api.js'
import { drawOverlay, followWidth, zoneWords, type Bucket } from './lib/chart.js'
import { when } from './lib/format.js'
import { Empty, ErrorNotice, html, Loading, mount, useEffect, useLayoutEffect, useRef, useState } from './lib/ui.js'

interface Result {
  stat_name: string
  kind: 'counter' | 'gauge'
  coefficient: number
  lag_buckets: number
  n: number
}
interface Answer {
  target: string
  target_kind: 'counter' | 'gauge'
  target_n: number
  window: { from: string; to: string; bucket_seconds: number }
  method: string
  transform: string
  results: Result[]
  excluded: Array<{ stat_name: string; reason: string; detail: string }>
  omitted: string[]
}
interface Detail {
  stat: { name: string; kind: 'counter' | 'gauge' }
  range: { from: string; to: string; bucket_seconds: number }
  points: Bucket[]
}

const name = pageData.stat ?? ''
const RANGES = ['24h', '7d', '30d']
const params = new URLSearchParams(location.search)
/**
 * The API's methods, its default first (the page said Spearman while it asked for the
 * default, departures): the page names the method the answer was computed with, and the reader may pick another.
 */
const METHODS: Record<string, { label: string; says: string }> = {
  departures: {
    label: 'Departures',
    says: 'how far each hour departs from what the stat usually does at that hour of the day, so a shared daily cycle does not count and shared spikes weigh by their size',
  },
  spearman: {
    label: 'Spearman',
    says: 'Spearman rank correlation of the hour-to-hour changes (one large shared spike counts as one rank step)',
  },
  pearson: { label: 'Pearson', says: 'Pearson correlation of the hour-to-hour changes, values as they are (large spikes dominate)' },
}

/** Strength in words, so a reader need not know what 0.4 means. */
function strength(r: number): string {
  const a = Math.abs(r)
  const word = a >= 0.7 ? 'strong' : a >= 0.4 ? 'moderate' : a >= 0.2 ? 'weak' : 'none to speak of'
  return a < 0.2 ? word : `${word}, ${r > 0 ? 'same way' : 'opposite way'}`
}

const lagWords = (lag: number) => (lag === 0 ? 'same hour' : lag > 0 ? `moves ${lag} h before` : `moves ${-lag} h after`)

function Overlay({ answer, other }: { answer: Answer; other: string }) {
  const ref = useRef<HTMLDivElement>(null)
  const [series, setSeries] = useState<Detail[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    setSeries(null)
    const q = `?from=${encodeURIComponent(answer.window.from)}&to=${encodeURIComponent(answer.window.to)}`
    Promise.all([api<Detail>('GET', statPath(answer.target) + q), api<Detail>('GET', statPath(other) + q)]).then(setSeries, setError)
  }, [answer, other])
  useLayoutEffect(() => {
    if (!series) return
    const el = ref.current!
    const [a] = series
    const plot = drawOverlay(
      el,
      {
        from: Date.parse(a.range.from) / 1000,
        to: Date.parse(a.range.to) / 1000,
        bucket: a.range.bucket_seconds,
        series: series.map((d) => ({ name: d.stat.name, kind: d.stat.kind, points: d.points })),
      },
      { axisEach: true, height: (w) => (w < 500 ? 240 : 300) },
    )
    el.dataset.drawn = other
    const stop = followWidth(el, plot, (w) => (w < 500 ? 240 : 300))
    return () => {
      stop()
      plot.destroy()
    }
  }, [series])
  if (error) return html`<${ErrorNotice} error=${error} />`
  if (!series) return html`<${Loading} what="Loading both charts…" />`
  return html`<div class="chart" ref=${ref} data-testid="overlay" role="img" aria-label=${`${answer.target} (left axis) and ${other} (right axis), hourly; ${zoneWords}`}></div>`
}

function CorrelationsPage() {
  const [range, setRange] = useState(RANGES.includes(params.get('range') ?? '') ? params.get('range')! : '7d')
  const [method, setMethod] = useState(METHODS[params.get('method') ?? ''] ? params.get('method')! : 'departures')
  const [answer, setAnswer] = useState<Answer | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [chosen, setChosen] = useState<string | null>(params.get('with'))
  useEffect(() => {
    setAnswer(null)
    setError(null)
    api<Answer>('GET', `/api/v1/correlations?stat=${encodeURIComponent(name)}&range=${range}&max_lag=6&method=${method}`).then((a) => {
      setAnswer(a)
      setChosen((c) => (c && a.results.some((r) => r.stat_name === c) ? c : (a.results[0]?.stat_name ?? null)))
    }, setError)
  }, [range, method])
  const keep = (r: string, w: string | null, m = method) => {
    const u = new URL(location.href)
    u.searchParams.set('range', r)
    u.searchParams.set('method', m)
    if (w) u.searchParams.set('with', w)
    history.replaceState(null, '', u)
  }
  const back = html`<p class="small"><a href=${`/stats/${encodeURIComponent(name)}`}>← ${name}</a></p>`
  if (error instanceof ApiError && error.status === 404)
    return html`${back}<h1>What moved with ${name}?</h1><${ErrorNotice} error=${error} />`
  return html`${back}<h1>What moved with ${name}?</h1>
    <p class="muted">Your other stats, ranked by how closely they move with ${name}, hour by hour, up to 6 h of lead or lag. Moving together is not causing: look at both charts.</p>
    <div class="ranges" role="group" aria-label="Range">${RANGES.map(
      (r) =>
        html`<button type="button" aria-pressed=${r === range ? 'true' : 'false'} onClick=${() => {
          setRange(r)
          keep(r, chosen)
        }}>${r}</button>`,
    )}</div>
    <div class="ranges" role="group" aria-label="Method">${Object.entries(METHODS).map(
      ([m, d]) =>
        html`<button type="button" aria-pressed=${m === method ? 'true' : 'false'} onClick=${() => {
          setMethod(m)
          keep(range, chosen, m)
        }}>${d.label}</button>`,
    )}</div>
    ${answer ? html`<p class="small muted" data-testid="method">Method: <strong>${METHODS[answer.method]?.label ?? answer.method}</strong>, ${METHODS[answer.method]?.says ?? answer.transform}.</p>` : null}
    <${ErrorNotice} error=${error} />
    ${
      answer === null
        ? error
          ? null
          : html`<${Loading} what="Comparing your stats…" />`
        : html`
      <p class="small muted">Hours from ${when(answer.window.from)} to ${when(answer.window.to)}; ${answer.target_n} usable hours of ${name}.</p>
      ${
        answer.results.length === 0
          ? html`<${Empty}>No stat has enough hours in common with ${name} over ${range} to compare (24 are needed).<//>`
          : html`
      <div class="table-wrap"><table class="stack" data-testid="ranked"><thead><tr><th>Stat</th><th class="num">Coefficient</th><th>Strength</th><th>Timing</th><th class="num">Hours</th></tr></thead><tbody>
        ${answer.results.map(
          (r) => html`<tr key=${r.stat_name} aria-current=${r.stat_name === chosen ? 'true' : undefined}>
          <td data-label="Stat"><button type="button" class="link" aria-pressed=${r.stat_name === chosen ? 'true' : 'false'} onClick=${() => {
            setChosen(r.stat_name)
            keep(range, r.stat_name)
          }}>${r.stat_name}</button></td>
          <td data-label="Coefficient" class="num">${r.coefficient.toFixed(2)}</td><td data-label="Strength">${strength(r.coefficient)}</td>
          <td data-label="Timing">${lagWords(r.lag_buckets)}</td><td data-label="Hours" class="num">${r.n}</td></tr>`,
        )}
      </tbody></table></div>
      ${
        chosen
          ? html`<h2>${name} and ${chosen}</h2><${Overlay} answer=${answer} other=${chosen} />
        <p class="small muted">Hourly; ${name} on the left axis, ${chosen} on the right. Click a name in the legend to show it alone.</p>`
          : null
      }`
      }
      ${
        answer.excluded.length
          ? html`<details><summary>${answer.excluded.length} stat${answer.excluded.length === 1 ? '' : 's'} not compared</summary>
        <ul>${answer.excluded.map((x) => html`<li><strong>${x.stat_name}</strong>: ${x.detail}</li>`)}</ul></details>`
          : null
      }`
    }`
}

mount(CorrelationsPage)
