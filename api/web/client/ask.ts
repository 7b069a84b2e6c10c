// Ask (docs/decisions.md §I-4.6.1): a question box; the answer, the values it rests on
// behind a disclosure, how the question was read, and the verifier's line.
import { api, fieldErrors } from './lib/api.js'
import { ZONE } from './lib/clock.js'
import { full, num, when } from './lib/format.js'
import { ErrorNotice, Field, html, mount, useEffect, useState } from './lib/ui.js'

interface Record_ {
  type: string
  stat?: string
  agg: string
  period?: string
  from?: string
  to?: string
  t?: number
  value: number | null
  n?: number
  of?: number[]
}
interface Answer {
  answer: string
  data: Record_[]
  source: string
  llm_used: boolean
  verifier: string
  intent: {
    op: string
    stats: string[]
    window: { label: string; from: string; to: string } | null
    compare_to?: { label: string }
    context?: { label: string }
    candidates?: string[]
    suggestions?: Array<{ stat: string; query: string }>
    reason?: string
    filter?: Record<string, string>
    group_by?: string
  }
}
interface StatItem {
  name: string
  kind: 'counter' | 'gauge'
  last_point_at?: string | null
}

/**
 * Example questions from the account's own stats that have data, the most recently written first, over a span
 * that reaches their newest point (the examples named a stat with no data, and "yesterday" of
 * a stat first written today answers nothing): "how many" only of a counter, an average of a gauge.
 */
export function examples(stats: StatItem[], now = Date.now()): string[] {
  const withData = stats.filter((s) => s.last_point_at).sort((a, b) => Date.parse(b.last_point_at!) - Date.parse(a.last_point_at!))
  const counter = withData.find((s) => s.kind === 'counter')
  const gauge = withData.find((s) => s.kind === 'gauge')
  if (!counter && !gauge) return ['How many signups in the last 24 hours?', 'Which stat had the most in the last 24 hours?']
  const age = now - Math.max(...[counter, gauge].filter((s) => s).map((s) => Date.parse(s!.last_point_at!)))
  const span = (s: StatItem) => {
    const ms = now - Date.parse(s.last_point_at!)
    return ms < 20 * 3600_000 ? 'in the last 24 hours' : ms < 6 * 86_400_000 ? 'in the last 7 days' : 'in the last 30 days'
  }
  return [
    ...(counter
      ? [
          `How many ${counter.name} ${span(counter)}?`,
          `Compare ${counter.name} this week with last week`,
          `${counter.name} in the last 2 days by hour`,
        ]
      : []),
    ...(gauge ? [`Average ${gauge.name} ${span(gauge)}`, `When did ${gauge.name} peak ${span(gauge)}?`] : []),
    `Which stat had the most ${age < 20 * 3600_000 ? 'in the last 24 hours' : age < 6 * 86_400_000 ? 'in the last 7 days' : 'in the last 30 days'}?`,
  ]
}

function DataTable({ data }: { data: Record_[] }) {
  if (!data.length) return html`<p class="muted small">No values: the question could not be answered from your stats.</p>`
  return html`<div class="table-wrap"><table class="stack"><thead><tr><th>#</th><th>Stat</th><th>What</th><th>Period</th><th class="num">Value</th><th class="num">Observations</th></tr></thead><tbody>
    ${data.map(
      (
        d,
        i,
      ) => html`<tr key=${i}><td data-label="#">${i}</td><td data-label="Stat">${d.stat ?? (d.of ? `from #${d.of.join(', #')}` : '')}</td>
      <td data-label="What">${d.type === 'derived' ? `${d.agg} (derived)` : d.agg}</td>
      <td data-label="Period" class="small">${d.t !== undefined ? when(new Date(d.t * 1000).toISOString()) : d.from ? `${when(d.from)} → ${when(d.to)}` : ''}</td>
      <td data-label="Value" class="num" title=${d.value === null ? '' : full(d.value)}>${num(d.value)}</td><td data-label="Observations" class="num">${d.n ?? ''}</td></tr>`,
    )}
  </tbody></table></div>`
}

function Ask() {
  const [query, setQuery] = useState(new URLSearchParams(location.search).get('q') ?? '')
  const [result, setResult] = useState<Answer | null>(null)
  const [asked, setAsked] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [stats, setStats] = useState<StatItem[]>([])
  useEffect(() => {
    api<{ stats: StatItem[] }>('GET', '/api/v1/stats').then(
      (r) => setStats(r.stats),
      () => {},
    )
  }, [])

  const ask = async (q: string) => {
    setBusy(true)
    setError(null)
    try {
      setResult(await api<Answer>('POST', '/api/v1/query', { query: q, time_zone: ZONE }))
      setAsked(q)
      setQuery(q)
      const u = new URL(location.href)
      u.searchParams.set('q', q)
      history.replaceState(null, '', u)
    } catch (err) {
      setError(err)
      setResult(null)
    } finally {
      setBusy(false)
    }
  }
  const submit = (e: Event) => {
    e.preventDefault()
    void ask(query)
  }
  const fields = fieldErrors(error)
  return html`<h1>Ask</h1>
    <p class="muted">Ask about your stats in plain English. Periods such as today or last Monday are calendar periods in ${ZONE} (<a href="/account">change</a>); every number in an answer is checked against the values it rests on.</p>
    <form class="card" onSubmit=${submit} noValidate>
      <${Field} id="query" label="Your question" hint="For example: how many signups yesterday? average latency over the last 6 hours? which stat had the most this week?" error=${fields.query}>
        <input id="query" value=${query} maxLength=${500} onInput=${(e: any) => setQuery(e.currentTarget.value)} aria-invalid=${fields.query ? 'true' : undefined} autocomplete="off" />
      <//>
      ${fields.query ? null : html`<${ErrorNotice} error=${error} />`}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Thinking…' : 'Ask'}</button></div>
      <p class="small">Try: ${examples(stats).map(
        (ex, i) =>
          html`${i ? ' · ' : ''}<button type="button" class="link" onClick=${() => {
            setQuery(ex)
            void ask(ex)
          }}>${ex}</button>`,
      )}</p>
    </form>
    ${
      result
        ? html`<section class="card" aria-live="polite" aria-labelledby="answer-title">
      <h2 id="answer-title" class="sr-only">Answer</h2>
      <p class="small muted">${asked}</p>
      <p class="answer" data-testid="answer">${result.answer}</p>
      ${
        result.intent.candidates?.length
          ? html`<p data-testid="did-you-mean">Did you mean ${result.intent.candidates.map((c, i) => {
              // A candidate with the question asked again about it is a link that asks it; else the stat's page.
              const again = result.intent.suggestions?.find((s) => s.stat === c)?.query
              return html`${i ? ', ' : ''}${
                again
                  ? html`<a href=${`/ask?q=${encodeURIComponent(again)}`} title=${`Ask: ${again}`} onClick=${(e: Event) => {
                      e.preventDefault()
                      void ask(again)
                    }}>${c}</a>`
                  : html`<a href=${`/stats/${encodeURIComponent(c)}`}>${c}</a>`
              }`
            })}?</p>`
          : null
      }
      <details><summary>The data this answer rests on (${result.data.length} ${result.data.length === 1 ? 'value' : 'values'})</summary>
        <${DataTable} data=${result.data} />
        <p class="small muted">Read as: ${result.intent.op}${result.intent.stats.length ? ` of ${result.intent.stats.join(', ')}` : ''}${
          result.intent.filter
            ? ` on ${Object.entries(result.intent.filter)
                .map(([k, v]) => `${k}=${v}`)
                .join(', ')}`
            : ''
        }${result.intent.group_by ? ` by ${result.intent.group_by}` : ''}${result.intent.window ? `, ${result.intent.window.label}` : ''}${result.intent.compare_to ? ` vs ${result.intent.compare_to.label}` : ''}${result.intent.context ? `; context: ${result.intent.context.label}` : ''}.</p>
      </details>
      <p class="small verifier" data-testid="verifier"><strong>Verifier:</strong> ${result.verifier}</p>
      <p class="small muted">Answered by the ${result.source} engine${result.llm_used ? ', worded by a model' : ', no model used'}.</p>
    </section>`
        : null
    }`
}

mount(Ask)
