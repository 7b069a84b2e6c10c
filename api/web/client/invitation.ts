// Accepting an invitation (docs/decisions.md §23): the link's token, sent with the signed-in session; the
// API checks that the session's e-mail is the invited one.
import { api } from './lib/api.js'
import { ErrorNotice, html, mount, useState } from './lib/ui.js'

function Invitation() {
  const token = new URLSearchParams(location.search).get('token') ?? ''
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const accept = async () => {
    setBusy(true)
    try {
      await api('POST', '/api/v1/invitations/accept', { token })
      location.assign('/members')
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return html`<h1>Invitation</h1>
    <p>You were invited to join an account. Accepting adds you as a member with the role the invitation gives.</p>
    <${ErrorNotice} error=${error} />
    <div class="actions"><button type="button" disabled=${busy} onClick=${accept}>Accept the invitation</button></div>`
}

mount(Invitation)
