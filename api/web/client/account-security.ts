// The account page's security sections (docs/decisions.md §19): change the password,
// two-factor sign-in (set up with a code of the app, recovery codes shown once, turn off), delete the account.
import { api, ApiError, fieldErrors } from './lib/api.js'
import { CopyButton, ErrorNotice, Field, html, Loading, useEffect, useState } from './lib/ui.js'

const value = (set: (v: string) => void) => (e: any) => set(e.currentTarget.value)

export function ChangePassword() {
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [error, setError] = useState<unknown>(null)
  const [done, setDone] = useState(false)
  const submit = async (e: Event) => {
    e.preventDefault()
    setError(null)
    setDone(false)
    const found: Record<string, string> = {}
    if (!current) found.current_password = 'Enter your current password.'
    if (next.length < 10) found.new_password = 'At least 10 characters.'
    setErrors(found)
    if (Object.keys(found).length) return
    try {
      await api('POST', '/api/v1/auth/password', { current_password: current, new_password: next })
      setDone(true)
      setCurrent('')
      setNext('')
    } catch (err) {
      setErrors(fieldErrors(err))
      setError(err)
    }
  }
  return html`<form class="card" onSubmit=${submit} noValidate aria-labelledby="password-title"><h2 id="password-title">Change password</h2>
    <p class="small muted">Every other session is signed out; this one stays. API keys keep working.</p>
    <div class="grid2">
      <${Field} id="current_password" label="Current password" error=${errors.current_password}>
        <input id="current_password" type="password" autocomplete="current-password" value=${current} onInput=${value(setCurrent)} /><//>
      <${Field} id="new_password" label="New password" hint="At least 10 characters." error=${errors.new_password}>
        <input id="new_password" type="password" autocomplete="new-password" value=${next} onInput=${value(setNext)} /><//>
    </div>
    <${ErrorNotice} error=${error} />
    ${done ? html`<p class="notice ok" role="status">Password changed. Other sessions are signed out.</p>` : null}
    <div class="actions"><button type="submit">Change password</button></div>
  </form>`
}

interface Status {
  enabled: boolean
  enabled_at: string | null
  recovery_codes_left: number
  locked: boolean
}

export function TwoFactor() {
  const [status, setStatus] = useState<Status | null>(null)
  const [setup, setSetup] = useState<{ secret: string; otpauth_uri: string; qr_code: string } | null>(null)
  const [codes, setCodes] = useState<string[] | null>(null)
  const [code, setCode] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<unknown>(null)
  const load = () => api<Status>('GET', '/api/v1/auth/2fa').then(setStatus, setError)
  useEffect(() => {
    void load()
  }, [])
  const act = (fn: () => Promise<void>) => async (e?: Event) => {
    e?.preventDefault()
    setError(null)
    try {
      await fn()
    } catch (err) {
      setError(err)
    }
  }
  const start = act(async () => setSetup(await api('POST', '/api/v1/auth/2fa/setup')))
  const enable = act(async () => {
    setCodes((await api<{ recovery_codes: string[] }>('POST', '/api/v1/auth/2fa/enable', { code: code.trim() })).recovery_codes)
    setSetup(null)
    setCode('')
    await load()
  })
  const renew = act(async () => {
    setCodes((await api<{ recovery_codes: string[] }>('POST', '/api/v1/auth/2fa/recovery-codes', { code: code.trim() })).recovery_codes)
    setCode('')
    await load()
  })
  const disable = act(async () => {
    await api('POST', '/api/v1/auth/2fa/disable', { password, code: code.trim() })
    setPassword('')
    setCode('')
    setCodes(null)
    await load()
  })
  let body: unknown
  if (!status) body = error ? null : html`<${Loading} />`
  else if (status.enabled) {
    body = html`<p data-testid="two-factor-status">On since ${status.enabled_at?.slice(0, 10)}. Recovery codes left: ${status.recovery_codes_left}.</p>
      ${status.locked ? html`<p class="notice error" role="alert">Locked after too many wrong codes: the app's codes are refused until you use a recovery code or reset the password.</p>` : null}
      ${
        codes
          ? html`<div class="notice ok" role="status"><p>Keep these recovery codes somewhere safe: each signs in once without the app, and they are not shown again.</p>
        <pre data-testid="recovery-codes">${codes.join('\n')}</pre><${CopyButton} text=${codes.join('\n')} label="Copy the codes" /></div>`
          : null
      }
      <form onSubmit=${disable} noValidate><h3>Turn off</h3>
        <div class="grid2">
          <${Field} id="tf-password" label="Password"><input id="tf-password" type="password" autocomplete="current-password" value=${password} onInput=${value(setPassword)} /><//>
          <${Field} id="tf-code" label="Code from the app, or a recovery code"><input id="tf-code" autocomplete="one-time-code" value=${code} onInput=${value(setCode)} /><//>
        </div>
        <div class="actions"><button type="submit" class="secondary">Turn off two-factor sign-in</button>
          <button type="button" class="secondary" onClick=${() => renew()}>New recovery codes</button></div>
        <p class="small muted">New recovery codes take a code (of the app, or a recovery code) in the field above; the old codes then stop working.</p>
      </form>`
  } else if (setup) {
    body = html`<ol><li>In your authenticator app, scan this QR code, or add an account with the key below it (time-based, 6 digits):
        <p><img class="qr" src=${setup.qr_code} width="200" height="200" alt="QR code of the two-factor key, for an authenticator app to scan" /></p>
        <p><code data-testid="totp-secret">${setup.secret}</code> <${CopyButton} text=${setup.secret} label="Copy the key" /></p>
        <p class="small muted">Or, where the app takes a link: <code class="small">${setup.otpauth_uri}</code></p></li>
      <li><form onSubmit=${enable} noValidate class="actions">
        <${Field} id="tf-enable-code" label="The 6-digit code the app shows"><input id="tf-enable-code" inputMode="numeric" autocomplete="one-time-code" value=${code} onInput=${value(setCode)} /><//>
        <button type="submit">Turn on</button></form></li></ol>`
  } else {
    body = html`<p data-testid="two-factor-status">Off. With it on, signing in takes a code of an authenticator app besides the password.</p>
      <div class="actions"><button type="button" class="secondary" onClick=${() => start()}>Set up two-factor sign-in</button></div>`
  }
  return html`<section class="card" aria-labelledby="tf-title"><h2 id="tf-title">Two-factor sign-in</h2>${body}<${ErrorNotice} error=${error} /></section>`
}

interface DeletionCheck {
  allowed: boolean
  reason: string | null
  portal_url: string | null
  code_required: boolean
}

/** A subscription still runs: say so, with the way to the portal, before any password or "cannot be undone". */
function SubscriptionFirst({ portal }: { portal: string }) {
  return html`<div class="notice error" role="alert" data-testid="delete-blocked">
    The account has a subscription that can still be charged: cancel it first in the <a href=${portal}>billing portal</a>, then come back to delete the account. Nothing has been deleted.</div>`
}

export function DeleteAccount() {
  const [password, setPassword] = useState('')
  const [code, setCode] = useState('')
  const [check, setCheck] = useState<DeletionCheck | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    api<DeletionCheck>('GET', '/api/v1/account/deletion').then(setCheck, setError)
  }, [])
  const submit = async (e: Event) => {
    e.preventDefault()
    setError(null)
    // Asked again now: the subscription may have started (or ended) since the page was opened.
    const now = await api<DeletionCheck>('GET', '/api/v1/account/deletion').catch((err) => {
      setError(err)
      return null
    })
    if (!now) return
    setCheck(now)
    if (!now.allowed) return
    if (!password) return setError(new Error('Enter your password to delete the account.'))
    if (now.code_required && !code.trim())
      return setError(new Error('Enter a code of your authenticator app (or a recovery code) to delete the account.'))
    if (!confirm('Delete this account and all of its data (stats, points, alerts, keys, shares, imports)? This cannot be undone.')) return
    try {
      await api('DELETE', '/api/v1/account', { password, ...(now.code_required ? { code: code.trim() } : {}) })
      location.assign('/?deleted=1')
    } catch (err) {
      if (err instanceof ApiError && err.code === 'subscription_active')
        setCheck({ ...now, allowed: false, portal_url: '/api/billing/portal' })
      else setError(err)
    }
  }
  const blocked = check && !check.allowed
  return html`<form class="card" onSubmit=${submit} noValidate aria-labelledby="delete-title"><h2 id="delete-title">Delete account</h2>
    <p class="small">Deletes the account and every piece of its data: stats and their points, alerts and their history, API keys, shares, imports and sessions. It cannot be undone. A paid subscription must be cancelled first (Billing).</p>
    ${
      blocked
        ? html`<${SubscriptionFirst} portal=${check.portal_url ?? '/api/billing/portal'} />`
        : html`
      <div class="grid2">
        <${Field} id="delete-password" label="Password"><input id="delete-password" type="password" autocomplete="current-password" value=${password} onInput=${value(setPassword)} /><//>
        ${
          check?.code_required
            ? html`<${Field} id="delete-code" label="Two-factor code" hint="The 6 digits the app shows now, or a recovery code.">
          <input id="delete-code" autocomplete="one-time-code" value=${code} onInput=${value(setCode)} /><//>`
            : null
        }
      </div>`
    }
    <${ErrorNotice} error=${error} />
    <div class="actions"><button type="submit" class="danger" disabled=${!check || blocked}>Delete my account and all its data</button></div>
  </form>`
}
