// The account: who is signed in, the plan and its limits, its time zone, sign out; password, two-factor
// sign-in, deletion.
import { zoneNames } from '../../../shared/time/zones.js'
import { api, fieldErrors } from './lib/api.js'
import { BROWSER_ZONE, ZONE } from './lib/clock.js'
import { when } from './lib/format.js'
import { ErrorNotice, Field, html, Loading, mount, useEffect, useState } from './lib/ui.js'
import { ChangePassword, DeleteAccount, TwoFactor } from './account-security.js'

interface Me {
  account: { id: string; email: string; plan: string; created_at: string; time_zone: string | null }
}

/** The account's clock: one zone for every chart, time and question period, or each browser's own. */
function TimeZone({ current }: { current: string | null }) {
  const [chosen, setChosen] = useState(current ?? '')
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  // Current names (Asia/Kolkata, Europe/Kyiv), not the legacy ones Intl still lists.
  const zones = zoneNames()
  const save = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      await api('PATCH', '/api/v1/account', { time_zone: chosen || null })
      // The zone is read once when a page loads (lib/clock.ts): load this one again to show every time in it.
      location.reload()
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  const err = fieldErrors(error).time_zone
  return html`<form class="card" onSubmit=${save} aria-labelledby="zone-title"><h2 id="zone-title">Time zone</h2>
    <p class="small muted" data-testid="zone-now">Times on these pages are in <strong>${ZONE}</strong>${current ? '' : " (this browser's zone)"}. Chart axes, dates and the question box's "today" or "last Monday" all use it.</p>
    <${Field} id="time_zone" label="Zone" hint="Pick one to see the same clock on every device, or leave each browser to use its own." error=${err}>
      <select id="time_zone" value=${chosen} onChange=${(e: any) => setChosen(e.currentTarget.value)}>
        <option value="">Each browser's own (${BROWSER_ZONE})</option>
        ${[...(current && !zones.includes(current) ? [current] : []), ...zones].map((z) => html`<option value=${z}>${z.replace(/_/g, ' ')}</option>`)}
      </select><//>
    ${err ? null : html`<${ErrorNotice} error=${error} />`}
    <div class="actions"><button type="submit" disabled=${busy || chosen === (current ?? '')}>Save time zone</button></div>
  </form>`
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
  anomaly_detection: boolean
}

function Account() {
  const [me, setMe] = useState<Me | null>(null)
  const [usage, setUsage] = useState<Usage | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    Promise.all([api<Me>('GET', '/api/v1/auth/me'), api<Usage>('GET', '/api/v1/usage')]).then(([m, u]) => {
      setMe(m)
      setUsage(u)
    }, setError)
  }, [])
  const signOut = async () => {
    try {
      await api('POST', '/api/v1/auth/logout')
      location.assign('/signin')
    } catch (err) {
      setError(err)
    }
  }
  const row = (label: string, l: Limit) =>
    html`<tr><th scope="row">${label}</th><td class="num">${l.used.toLocaleString('en-US')}</td><td class="num">${l.limit.toLocaleString('en-US')}</td></tr>`
  return html`<h1>Account</h1>
    <${ErrorNotice} error=${error} />
    ${
      !me || !usage
        ? error
          ? null
          : html`<${Loading} />`
        : html`
      <dl class="summary"><div><dt>E-mail</dt><dd class="small">${me.account.email}</dd></div><div><dt>Plan</dt><dd>${usage.plan}</dd></div>
        <div><dt>Member since</dt><dd class="small">${when(me.account.created_at)}</dd></div></dl>
      <h2>Plan limits</h2>
      <div class="table-wrap"><table><thead><tr><th></th><th class="num">Used</th><th class="num">Limit</th></tr></thead><tbody>
        ${row('Tracked stats', usage.stats)}${row('Points today (UTC)', usage.points_today)}${row('Alerts', usage.alerts)}</tbody></table></div>
      <p class="small muted">History kept: ${usage.retention_days} days. Anomaly detection: ${usage.anomaly_detection ? 'included' : 'on paid plans'}. The points allowance counts UTC days.</p>
      <${TimeZone} current=${me.account.time_zone} />`
    }
    <h2>Keys</h2><p><a href="/keys">Manage API keys</a></p>
    <h2>Sign out</h2><p class="muted small">Ends this session on the server; your keys keep working.</p>
    <div class="actions"><button type="button" class="secondary" onClick=${signOut}>Sign out</button></div>
    <${ChangePassword} />
    <${TwoFactor} />
    <${DeleteAccount} />`
}

mount(Account)
