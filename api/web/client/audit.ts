// The audit log (docs/decisions.md §23): every change, newest first, who made it and from where; 50 a page.
import { api } from './lib/api.js'
import { when } from './lib/format.js'
import { Empty, ErrorNotice, html, Loading, mount, useEffect, useState } from './lib/ui.js'

interface Event {
  id: string
  at: string
  actor: { type: 'person' | 'key' | 'billing'; id: string; email?: string }
  action: string
  target: string
  ip: string | null
  summary: Record<string, unknown>
}

function Audit() {
  const [events, setEvents] = useState<Event[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const load = async (cursor?: string) => {
    try {
      const res = await api<{ events: Event[]; next_cursor: string | null }>('GET', `/api/v1/audit${cursor ? `?cursor=${cursor}` : ''}`)
      setEvents((old) => (cursor ? [...(old ?? []), ...res.events] : res.events))
      setNext(res.next_cursor)
    } catch (err) {
      setError(err)
    }
  }
  useEffect(() => {
    void load()
  }, [])
  return html`<h1>Audit log</h1>
    <p class="muted">Every change to this account, newest first; kept 400 days. Secrets are never recorded.</p>
    <${ErrorNotice} error=${error} />
    ${
      events === null
        ? error
          ? null
          : html`<${Loading} />`
        : events.length === 0
          ? html`<${Empty}>Nothing yet.<//>`
          : html`<div class="table-wrap"><table class="stack"><thead><tr><th>When</th><th>Who</th><th>What</th><th>Target</th><th>From</th><th>Change</th></tr></thead>
        <tbody>${events.map(
          (e) => html`<tr key=${e.id} data-testid="audit-event"><td data-label="When">${when(e.at)}</td>
          <td data-label="Who">${e.actor.type === 'key' ? `key ${e.actor.id.slice(0, 8)}` : e.actor.type === 'billing' ? 'billing (payment provider)' : (e.actor.email ?? e.actor.id)}</td>
          <td data-label="What">${e.action}</td><td data-label="Target"><code>${e.target}</code></td><td data-label="From">${e.ip ?? ''}</td>
          <td data-label="Change"><code>${JSON.stringify(e.summary)}</code></td></tr>`,
        )}</tbody></table></div>
        ${next ? html`<div class="actions"><button type="button" class="secondary" onClick=${() => load(next)}>Older</button></div>` : null}`
    }`
}

mount(Audit)
