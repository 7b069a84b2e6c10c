// The dashboards list: each dashboard with its cards' titles, a link to it, and a form to make a new one
// (cards are added on the dashboard itself, or from a stat's page).
import { api, fieldErrors } from './lib/api.js'
import { age } from './lib/format.js'
import { Empty, ErrorNotice, Field, html, Loading, mount, useEffect, useState } from './lib/ui.js'

export interface Card {
  id: string
  title: string
  stats: string[]
  range: string | null
  /** Tag filter and group-by key (docs/decisions.md §24), kept when the card list is saved back. */
  filter?: string | null
  group_by?: string | null
}
export interface Dashboard {
  id: string
  name: string
  range: string
  cards: Card[]
  created_at: string
  updated_at: string
}

function Create() {
  const [name, setName] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const submit = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const d = (await api<{ dashboard: Dashboard }>('POST', '/api/v1/dashboards', { name, cards: [] })).dashboard
      location.assign(`/dashboards/${d.id}`)
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  const fields = fieldErrors(error)
  return html`<form class="card" onSubmit=${submit} aria-labelledby="create-title"><h2 id="create-title">New dashboard</h2>
    <${Field} id="name" label="Name" hint="Then add cards to it: here on the dashboard, or from any stat's page." error=${fields.name}>
      <input id="name" value=${name} maxlength="100" required onInput=${(e: any) => setName(e.currentTarget.value)} aria-invalid=${fields.name ? 'true' : undefined} />
    <//>
    ${fields.name ? null : html`<${ErrorNotice} error=${error} />`}
    <div class="actions"><button type="submit" disabled=${busy}>Create the dashboard</button></div></form>`
}

function DashboardsPage() {
  const [list, setList] = useState<Dashboard[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    api<{ dashboards: Dashboard[] }>('GET', '/api/v1/dashboards').then((r) => setList(r.dashboards), setError)
  }, [])
  const deleted = new URLSearchParams(location.search).get('deleted')
  return html`<h1>Dashboards</h1>
    <p class="muted">Several stats on one screen: one chart per card, a card's stats overlaid, the crosshair shared across cards.</p>
    ${deleted ? html`<div class="notice ok" role="status">Dashboard “${deleted}” deleted (its stats stay).</div>` : null}
    <${ErrorNotice} error=${error} />
    ${
      list === null
        ? error
          ? null
          : html`<${Loading} />`
        : list.length === 0
          ? html`<${Empty}>No dashboard yet. Make one below, then add stats to it.<//>`
          : html`<ul class="boards">${list.map(
              (d) => html`<li key=${d.id} class="card"><a class="row-title" href=${`/dashboards/${d.id}`}>${d.name}</a>
          <div class="small muted">${d.cards.length === 0 ? 'no cards yet' : `${d.cards.length} card${d.cards.length === 1 ? '' : 's'}: ${d.cards.map((c) => c.title).join(' · ')}`} · ${d.range} · changed ${age(d.updated_at)}</div></li>`,
            )}</ul>`
    }
    <${Create} />`
}

mount(DashboardsPage)
