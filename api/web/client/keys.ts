// API keys (docs/decisions.md §3): list, create (the secret shown once, with
// a copy button and the exact curl for a first point), revoke.
import { firstPointCurl } from '../first-point.js'
import { api, fieldErrors, pageData } from './lib/api.js'
import { age, when } from './lib/format.js'
import { CopyButton, Empty, ErrorNotice, Field, html, Loading, mount, useEffect, useState } from './lib/ui.js'

interface Key {
  id: string
  label: string
  prefix: string
  created_at: string
  last_used_at: string | null
  scope: 'write' | 'read' | 'full'
  created_by: { id: string; email: string | null } | null
}

function NewKey({ created, onDone }: { created: { key: string; api_key: Key }; onDone: () => void }) {
  const curl = firstPointCurl(pageData.base ?? location.origin, created.key)
  return html`<section class="card" aria-labelledby="new-key-title">
    <h2 id="new-key-title">Key “${created.api_key.label}” created</h2>
    <p><strong>Copy the secret now: it is shown only this once.</strong> The service keeps only its hash.</p>
    <div class="secret"><code data-testid="secret">${created.key}</code><${CopyButton} text=${created.key} label="Copy key" /></div>
    <h3>Send a first point</h3>
    <pre data-testid="curl">${curl}</pre>
    <div class="actions"><${CopyButton} text=${curl} label="Copy curl" /><a class="button secondary" href="/stats">Watch it arrive on the stats page</a>
      <button type="button" class="link" onClick=${onDone}>Hide the secret</button></div>
  </section>`
}

function Keys() {
  const [keys, setKeys] = useState<Key[] | null>(null)
  const [loadError, setLoadError] = useState<unknown>(null)
  const [label, setLabel] = useState('')
  const [scope, setScope] = useState('full')
  const [createError, setCreateError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [created, setCreated] = useState<{ key: string; api_key: Key } | null>(null)
  const [notice, setNotice] = useState('')

  const load = async () => {
    try {
      setKeys((await api<{ api_keys: Key[] }>('GET', '/api/v1/auth/api-keys')).api_keys)
      setLoadError(null)
    } catch (err) {
      setLoadError(err)
    }
  }
  useEffect(() => {
    void load()
  }, [])

  const create = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setCreateError(null)
    try {
      const res = await api<{ key: string; api_key: Key }>('POST', '/api/v1/auth/api-keys', { label, scope })
      setCreated(res)
      setLabel('')
      setNotice('')
      await load()
    } catch (err) {
      setCreateError(err)
    } finally {
      setBusy(false)
    }
  }
  const revoke = async (k: Key) => {
    if (
      !confirm(
        `Revoke the key “${k.label}” (${k.prefix}…)? Every client using it stops being able to write or read within a second. This cannot be undone.`,
      )
    )
      return
    try {
      await api('DELETE', `/api/v1/auth/api-keys/${k.id}`)
      if (created?.api_key.id === k.id) setCreated(null)
      await load()
      setNotice(`Key “${k.label}” revoked.`)
    } catch (err) {
      setLoadError(err)
    }
  }
  const fields = fieldErrors(createError)
  const welcome = new URLSearchParams(location.search).has('welcome')

  return html`<h1>API keys</h1>
    ${welcome && !created ? html`<div class="notice ok">Your account is ready. Create a key to start sending points.</div>` : null}
    <p class="muted">Keys authenticate your code: as <code>Authorization: Bearer …</code> on the v1 API, and as <code>ezkey</code>/<code>ukey</code> on the legacy <code>/ez</code>, <code>/c</code> and <code>/v</code> routes. Hold several to rotate one without downtime.</p>
    ${created ? html`<${NewKey} created=${created} onDone=${() => setCreated(null)} />` : null}
    <form class="card" onSubmit=${create} noValidate>
      <${Field} id="label" label="New key label" hint="1 to 100 characters, e.g. “production web” or “laptop”." error=${fields.label}>
        <input id="label" value=${label} maxLength=${100} onInput=${(e: any) => setLabel(e.currentTarget.value)} aria-invalid=${fields.label ? 'true' : undefined} />
      <//>
      <label for="scope">Scope</label>
      <select id="scope" value=${scope} onChange=${(e: any) => setScope(e.currentTarget.value)}>
        <option value="full">full: everything</option><option value="write">write: send points only (for clients and hosts)</option><option value="read">read: reads only</option>
      </select>
      ${fields.label ? null : html`<${ErrorNotice} error=${createError} />`}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create key'}</button></div>
    </form>
    ${notice ? html`<div class="notice ok" role="status">${notice}</div>` : null}
    <h2>Your keys</h2>
    <${ErrorNotice} error=${loadError} retry=${load} />
    ${
      keys === null
        ? loadError
          ? null
          : html`<${Loading} />`
        : keys.length === 0
          ? html`<${Empty}>No keys yet. Create one above to send your first point.<//>`
          : html`<div class="table-wrap"><table class="stack"><thead><tr><th>Label</th><th>Key starts with</th><th>Scope</th><th>Created by</th><th>Created</th><th>Last used</th><th><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>${keys.map(
          (k) => html`<tr key=${k.id}>
          <td data-label="Label" class="row-title">${k.label}</td><td data-label="Key starts with"><code>${k.prefix}…</code></td>
          <td data-label="Scope">${k.scope}</td><td data-label="Created by">${k.created_by?.email ?? ''}</td>
          <td data-label="Created">${when(k.created_at)}</td><td data-label="Last used">${age(k.last_used_at)}</td>
          <td data-label=""><button type="button" class="secondary" onClick=${() => revoke(k)} aria-label=${`Revoke key ${k.label}`}>Revoke</button></td></tr>`,
        )}
        </tbody></table></div>`
    }`
}

mount(Keys)
