// The account: who is signed in, the plan and its limits, sign out; password, two-factor sign-in, deletion.
import { api } from './lib/api.js'
import { when } from './lib/format.js'
import { ErrorNotice, html, Loading, mount, useEffect, useState } from './lib/ui.js'
import { ChangePassword, DeleteAccount, TwoFactor } from './account-security.js'

interface Me { account: { id: string; email: string; plan: string; created_at: string } }
interface Limit { used: number; limit: number }
interface Usage { plan: string; stats: Limit; points_today: Limit; alerts: Limit; retention_days: number; anomaly_detection: boolean }

function Account() {
  const [me, setMe] = useState<Me | null>(null)
  const [usage, setUsage] = useState<Usage | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    Promise.all([api<Me>('GET', '/api/v1/auth/me'), api<Usage>('GET', '/api/v1/usage')]).then(([m, u]) => { setMe(m); setUsage(u) }, setError)
  }, [])
  const signOut = async () => {
    try {
      await api('POST', '/api/v1/auth/logout')
      location.assign('/signin')
    } catch (err) {
      setError(err)
    }
  }
  const row = (label: string, l: Limit) => html`<tr><th scope="row">${label}</th><td class="num">${l.used.toLocaleString('en-US')}</td><td class="num">${l.limit.toLocaleString('en-US')}</td></tr>`
  return html`<h1>Account</h1>
    <${ErrorNotice} error=${error} />
    ${!me || !usage ? (error ? null : html`<${Loading} />`) : html`
      <dl class="summary"><div><dt>E-mail</dt><dd class="small">${me.account.email}</dd></div><div><dt>Plan</dt><dd>${usage.plan}</dd></div>
        <div><dt>Member since</dt><dd class="small">${when(me.account.created_at)}</dd></div></dl>
      <h2>Plan limits</h2>
      <div class="table-wrap"><table><thead><tr><th></th><th class="num">Used</th><th class="num">Limit</th></tr></thead><tbody>
        ${row('Tracked stats', usage.stats)}${row('Points today (UTC)', usage.points_today)}${row('Alerts', usage.alerts)}</tbody></table></div>
      <p class="small muted">History kept: ${usage.retention_days} days. Anomaly detection: ${usage.anomaly_detection ? 'included' : 'on paid plans'}.</p>`}
    <h2>Keys</h2><p><a href="/keys">Manage API keys</a></p>
    <h2>Sign out</h2><p class="muted small">Ends this session on the server; your keys keep working.</p>
    <div class="actions"><button type="button" class="secondary" onClick=${signOut}>Sign out</button></div>
    <${ChangePassword} />
    <${TwoFactor} />
    <${DeleteAccount} />`
}

mount(Account)
