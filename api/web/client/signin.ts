// Sign in and create an account (docs/decisions.md §2): one form, two modes.
import { api, ApiError, fieldErrors, pageData } from './lib/api.js'
import { ErrorNotice, Field, html, mount, useState } from './lib/ui.js'

/**
 * Where to go after sign-in: `next` only when it names a page of this origin (no open redirect). It is
 * resolved the way the browser will resolve it (the URL parser drops tabs and newlines and reads `\` as
 * `/`, so `/\t/host` is `//host`), and the result's origin compared with ours; a pattern on the raw text
 * cannot foresee every such rewrite.
 */
function nextPath(): string {
  const next = new URLSearchParams(location.search).get('next')
  if (!next) return '/stats'
  let url: URL
  try {
    url = new URL(next, location.origin)
  } catch {
    return '/stats'
  }
  if (url.origin !== location.origin) return '/stats'
  // The path must also start with a single `/`: a pathname of our own origin can still begin `//host`
  // (`/.//host`, `/x/..//host`, `/%2e//host`, `http://us//host` all resolve so), which location.assign
  // reads as a URL of another host.
  return /^\/(?![/\\])/.test(url.pathname) ? url.pathname + url.search + url.hash : '/stats'
}

function SignIn() {
  const signup = pageData.mode === 'signup'
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  // Asked for once the password is right and the account has two-factor sign-in on.
  const [needCode, setNeedCode] = useState(false)
  const [code, setCode] = useState('')
  const fields = fieldErrors(error)

  const submit = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      await api('POST', signup ? '/api/v1/auth/signup' : '/api/v1/auth/login', { email, password, ...(needCode ? { code } : {}) })
      // A sign-up from an invitation's link goes back to it; any other to the keys page.
      location.assign(signup && !new URLSearchParams(location.search).has('next') ? '/keys?welcome=1' : nextPath())
    } catch (err) {
      if (err instanceof ApiError && err.code === 'two_factor_required') {
        setNeedCode(true)
        setError(null)
        setTimeout(() => document.getElementById('code')?.focus())
      } else {
        setError(err)
      }
      setBusy(false)
    }
  }
  const next = new URLSearchParams(location.search).get('next')
  const other = signup
    ? `/signin${next ? `?next=${encodeURIComponent(next)}` : ''}`
    : `/signup${next ? `?next=${encodeURIComponent(next)}` : ''}`
  return html`<div class="narrow">
    <h1>${signup ? 'Create your account' : 'Sign in'}</h1>
    <p class="muted">${signup ? 'Free plan: 10 stats, 100,000 points a day, no card.' : 'Charts, alerts and keys for your stats.'}</p>
    <form onSubmit=${submit} noValidate>
      <${Field} id="email" label="E-mail" error=${fields.email}>
        <input id="email" type="email" autocomplete="email" required value=${email} onInput=${(e: any) => setEmail(e.currentTarget.value)}
          aria-invalid=${fields.email ? 'true' : undefined} />
      <//>
      <${Field} id="password" label="Password" hint=${signup ? 'At least 10 characters.' : undefined} error=${fields.password}>
        <input id="password" type="password" autocomplete=${signup ? 'new-password' : 'current-password'} required minLength=${signup ? 10 : undefined}
          value=${password} onInput=${(e: any) => setPassword(e.currentTarget.value)} aria-invalid=${fields.password ? 'true' : undefined} />
      <//>
      ${
        needCode
          ? html`<${Field} id="code" label="Code from your authenticator app" hint="The 6 digits the app shows now, or one of your recovery codes.">
        <input id="code" autocomplete="one-time-code" inputMode="text" value=${code} onInput=${(e: any) => setCode(e.currentTarget.value)} />
      <//>`
          : null
      }
      ${Object.keys(fields).length ? null : html`<${ErrorNotice} error=${error} />`}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Please wait…' : signup ? 'Create account' : 'Sign in'}</button></div>
    </form>
    <p>${signup ? 'Already have an account? ' : 'New here? '}<a href=${other}>${signup ? 'Sign in' : 'Create an account'}</a></p>
    ${signup ? null : html`<p><a href="/reset">Forgot your password?</a></p>`}
  </div>`
}

mount(SignIn)
