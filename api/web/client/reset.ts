// Password reset (docs/decisions.md §19): without a token, ask for a link by e-mail; with the token of a
// mailed link, choose a new password (every session is then signed out, API keys keep working).
import { api, fieldErrors } from './lib/api.js'
import { ErrorNotice, Field, html, mount, useState } from './lib/ui.js'

const token = new URLSearchParams(location.search).get('token')

function AskForLink() {
  const [email, setEmail] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [sent, setSent] = useState(false)
  const submit = async (e: Event) => {
    e.preventDefault()
    setError(null)
    if (!/^[^@\s]+@[^@\s]+$/.test(email.trim())) return setError(new Error('Enter the e-mail address of your account.'))
    try {
      await api('POST', '/api/v1/auth/password-reset', { email: email.trim() })
      setSent(true)
    } catch (err) {
      setError(err)
    }
  }
  if (sent) {
    return html`<p class="notice ok" role="status">If an account uses ${email.trim()}, a link to choose a new password is on its way. It works once, within an hour.</p>
      <p><a href="/signin">Back to sign in</a></p>`
  }
  return html`<form onSubmit=${submit} noValidate>
    <p class="muted">Enter your account's e-mail address; we mail you a link to choose a new password.</p>
    <${Field} id="email" label="E-mail"><input id="email" type="email" autocomplete="email" value=${email} onInput=${(e: any) => setEmail(e.currentTarget.value)} /><//>
    <${ErrorNotice} error=${error} />
    <div class="actions"><button type="submit">Mail me a link</button></div>
    <p><a href="/signin">Back to sign in</a></p>
  </form>`
}

function NewPassword({ token }: { token: string }) {
  const [password, setPassword] = useState('')
  const [again, setAgain] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [done, setDone] = useState(false)
  const submit = async (e: Event) => {
    e.preventDefault()
    setError(null)
    const found: Record<string, string> = {}
    if (password.length < 10) found.password = 'At least 10 characters.'
    else if (password !== again) found.again = 'The two passwords differ.'
    setErrors(found)
    if (Object.keys(found).length) return
    try {
      await api('POST', '/api/v1/auth/password-reset/confirm', { token, password })
      setDone(true)
    } catch (err) {
      setErrors(fieldErrors(err))
      setError(err)
    }
  }
  if (done) {
    return html`<p class="notice ok" role="status">Your password is changed. Every session was signed out; your API keys keep working.</p>
      <p><a class="button" href="/signin">Sign in</a></p>`
  }
  return html`<form onSubmit=${submit} noValidate>
    <${Field} id="password" label="New password" hint="At least 10 characters." error=${errors.password}>
      <input id="password" type="password" autocomplete="new-password" value=${password} onInput=${(e: any) => setPassword(e.currentTarget.value)} /><//>
    <${Field} id="again" label="New password, again" error=${errors.again}>
      <input id="again" type="password" autocomplete="new-password" value=${again} onInput=${(e: any) => setAgain(e.currentTarget.value)} /><//>
    <${ErrorNotice} error=${error} />
    <div class="actions"><button type="submit">Set the new password</button></div>
    ${error ? html`<p><a href="/reset">Ask for a new link</a></p>` : null}
  </form>`
}

function Reset() {
  return html`<div class="narrow"><h1>${token ? 'Choose a new password' : 'Reset your password'}</h1>
    ${token ? html`<${NewPassword} token=${token} />` : html`<${AskForLink} />`}</div>`
}

mount(Reset)
