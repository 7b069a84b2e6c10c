// Send data: copy-paste set-ups for Telegraf (InfluxDB line protocol), a StatsD client and Prometheus
// remote_write, with a key filled in. The service keeps only keys' hashes, so the page cannot show an
// existing key: the person pastes one, or creates one here (shown once, as on the keys page). The key
// stays in the page; nothing is stored in the browser.
import { prometheusConfig, statsdExample, telegrafConfig } from '../send-config.js'
import { isPlanName, type PlanName } from '../../../shared/plans.js'
import { api, pageData } from './lib/api.js'
import { CopyButton, ErrorNotice, html, mount, useState } from './lib/ui.js'

const PLACEHOLDER = '<API_KEY>'

function Snippet({ id, title, intro, text }: { id: string; title: string; intro: unknown; text: string }) {
  return html`<section class="card" aria-labelledby=${`${id}-title`}>
    <h2 id=${`${id}-title`}>${title}</h2>
    <p>${intro}</p>
    <pre data-testid=${id}>${text}</pre>
    <div class="actions"><${CopyButton} text=${text} label=${`Copy ${title} set-up`} /></div>
  </section>`
}

function Send() {
  const [key, setKey] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const base = pageData.base ?? location.origin
  const host = new URL(base).hostname
  const port = pageData.statsdPort ? Number(pageData.statsdPort) : undefined
  const k = key.trim() || PLACEHOLDER
  // The set-ups fit the plan they are shown to: the free plan's 10 stats take fewer Telegraf fields.
  const plan = isPlanName(pageData.plan ?? '') ? (pageData.plan as PlanName) : 'free'
  const create = async () => {
    setBusy(true)
    setError(null)
    try {
      setKey((await api<{ key: string }>('POST', '/api/v1/auth/api-keys', { label: 'Send data' })).key)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return html`<h1>Send data</h1>
    <p class="muted">Point the agents you already run here: Telegraf (InfluxDB line protocol), any StatsD or DogStatsD client, or Prometheus. Each set-up below uses your API key; names are built from the metric and its tags, sorted, as <code>name.tag_value</code>.</p>
    <div class="card">
      <label for="key">API key</label>
      <input id="key" value=${key} placeholder="mk_…" autocomplete="off" spellcheck=${false} onInput=${(e: any) => setKey(e.currentTarget.value)} />
      <p class="muted small">Paste a key from <a href="/keys">API keys</a> (the service keeps only its hash, so it cannot show it again), or create one for these agents:</p>
      <div class="actions"><button type="button" onClick=${create} disabled=${busy}>${busy ? 'Creating…' : 'Create a key for these agents'}</button></div>
      ${key && !error ? html`<p class="notice ok" role="status" data-testid="key-note">The key is filled in below. Copy it now if you created it here: it is shown only this once.</p>` : null}
      <${ErrorNotice} error=${error} />
    </div>
    <${Snippet} id="telegraf" title="Telegraf" intro=${html`InfluxDB line protocol on <code>${base}/api/v2/write</code> (and the 1.x <code>/write</code>): each field becomes a gauge. Any InfluxDB client library works the same way.`} text=${telegrafConfig(base, k, plan)} />
    <${Snippet} id="statsd" title="StatsD" intro=${html`UDP or TCP on port ${port ?? '(off)'}; the key is the metric prefix. Counters (<code>|c</code>, sample rates honoured), gauges (<code>|g</code>, absolute values only), timers and histograms (<code>|ms</code>, <code>|h</code>, <code>|d</code>) as gauge observations, DogStatsD tags. UDP has no answer: refused packets are counted under <code>statsd_refused_today</code> in your usage.`} text=${statsdExample(host, port, k)} />
    <${Snippet} id="prometheus" title="Prometheus" intro=${html`Remote write 1.0 to <code>${base}/api/v1/prom/write</code>: every sample of a series is a gauge observation.`} text=${prometheusConfig(base, k, plan)} />`
}

mount(Send)
