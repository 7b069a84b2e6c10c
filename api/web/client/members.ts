// Members (docs/decisions.md §23): the account switcher, the members with role and last sign-in, inviting,
// changing a role, removing, pending invitations, transferring ownership, leaving. What a role may not do, the API
// refuses (403 forbidden_role); the page shows the refusal.
import { api } from './lib/api.js'
import { age, when } from './lib/format.js'
import { ErrorNotice, html, Loading, mount, useEffect, useState } from './lib/ui.js'

const ROLES = ['owner', 'admin', 'member', 'viewer'] as const
interface Member {
  id: string
  email: string
  role: string
  joined_at: string
  last_sign_in_at: string | null
}
interface Invitation {
  id: string
  email: string
  role: string
  expires_at: string
}
interface Acct {
  id: string
  email: string
  role: string
  active: boolean
}

function Switcher({ accounts }: { accounts: Acct[] }) {
  if (accounts.length < 2) return null
  const active = accounts.find((a) => a.active)
  const change = async (e: any) => {
    await api('POST', '/api/v1/session/account', { account_id: e.currentTarget.value })
    location.reload()
  }
  return html`<div class="card"><label for="switch-account">Account</label>
    <select id="switch-account" value=${active?.id} onChange=${change}>
      ${accounts.map((a) => html`<option value=${a.id}>${a.email} (${a.role})</option>`)}
    </select></div>`
}

function Members() {
  const [accounts, setAccounts] = useState<Acct[]>([])
  const [members, setMembers] = useState<Member[] | null>(null)
  const [invitations, setInvitations] = useState<Invitation[]>([])
  const [error, setError] = useState<unknown>(null)
  const [notice, setNotice] = useState('')
  const [email, setEmail] = useState('')
  const [role, setRole] = useState('member')

  const load = async () => {
    try {
      setAccounts((await api<{ accounts: Acct[] }>('GET', '/api/v1/accounts')).accounts)
      setMembers((await api<{ members: Member[] }>('GET', '/api/v1/members')).members)
      // Pending invitations are for owners and admins; others simply do not see the list.
      setInvitations(
        (await api<{ invitations: Invitation[] }>('GET', '/api/v1/members/invitations').catch(() => ({ invitations: [] }))).invitations,
      )
    } catch (err) {
      setError(err)
    }
  }
  useEffect(() => {
    void load()
  }, [])
  const act = (what: () => Promise<unknown>, done: string) => async () => {
    setError(null)
    try {
      await what()
      setNotice(done)
      await load()
    } catch (err) {
      setError(err)
    }
  }
  const invite = (e: Event) => {
    e.preventDefault()
    void act(() => api('POST', '/api/v1/members/invitations', { email, role }), `Invitation sent to ${email}.`)().then(() => setEmail(''))
  }
  const me = accounts.find((a) => a.active)
  // The account must keep an owner (the API refuses with 409 last_owner): its only owner's row offers no Remove
  // and no other role.
  const soleOwner = (m: Member) => m.role === 'owner' && members?.filter((x) => x.role === 'owner').length === 1
  // Leaving changes the account the session acts on: the whole page reloads onto the next one.
  const leave = async (accountId: string) => {
    setError(null)
    try {
      await api('POST', '/api/v1/account/leave', { account_id: accountId })
      location.reload()
    } catch (err) {
      setError(err)
    }
  }

  return html`<h1>Members</h1>
    <${Switcher} accounts=${accounts} />
    ${notice ? html`<div class="notice ok" role="status">${notice}</div>` : null}
    <${ErrorNotice} error=${error} />
    ${
      members === null
        ? html`<${Loading} />`
        : html`<div class="table-wrap"><table class="stack"><thead><tr><th>E-mail</th><th>Role</th><th>Joined</th><th>Last sign-in</th><th><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${members.map(
        (m) => html`<tr key=${m.id} data-testid="member">
        <td data-label="E-mail" class="row-title">${m.email}</td>
        <td data-label="Role">${
          soleOwner(m)
            ? html`<span data-testid="sole-owner">owner</span> <span class="small muted">(the only one: make another member the owner to change this)</span>`
            : html`<select aria-label=${`Role of ${m.email}`} value=${m.role}
          onChange=${(e: any) => act(() => api('PATCH', `/api/v1/members/${m.id}`, { role: e.currentTarget.value }), `${m.email} is now ${e.currentTarget.value}.`)()}>
          ${ROLES.map((r) => html`<option value=${r}>${r}</option>`)}</select>`
        }</td>
        <td data-label="Joined">${when(m.joined_at)}</td><td data-label="Last sign-in">${age(m.last_sign_in_at)}</td>
        <td data-label="">
          ${
            soleOwner(m)
              ? null
              : html`<button type="button" class="secondary" aria-label=${`Remove ${m.email}`}
            onClick=${() => confirm(`Remove ${m.email} from this account?`) && act(() => api('DELETE', `/api/v1/members/${m.id}`), `${m.email} removed.`)()}>Remove</button>`
          }
          ${
            me?.role === 'owner' && m.role !== 'owner'
              ? html` <button type="button" class="link" aria-label=${`Make ${m.email} the owner`}
            onClick=${() => confirm(`Make ${m.email} the owner? You become an admin.`) && act(() => api('POST', '/api/v1/account/transfer', { member_id: m.id }), `${m.email} is now the owner.`)()}>Make owner</button>`
              : null
          }
        </td></tr>`,
      )}</tbody></table></div>`
    }
    <form class="card" onSubmit=${invite} noValidate>
      <h2>Invite</h2>
      <label for="invite-email">E-mail</label>
      <input id="invite-email" type="email" value=${email} onInput=${(e: any) => setEmail(e.currentTarget.value)} />
      <label for="invite-role">Role</label>
      <select id="invite-role" value=${role} onChange=${(e: any) => setRole(e.currentTarget.value)}>${ROLES.map((r) => html`<option value=${r}>${r}</option>`)}</select>
      <p class="muted">The link in the mail works 7 days, once, and only for that address.</p>
      <div class="actions"><button type="submit">Send invitation</button></div>
    </form>
    ${
      me
        ? html`<div class="card"><h2>Leave</h2>
      <p class="muted">You lose access to ${me.email}'s stats, alerts and keys; the account's last owner cannot leave (hand ownership on first).</p>
      <div class="actions"><button type="button" class="secondary"
        onClick=${() => confirm(`Leave ${me.email}'s account?`) && leave(me.id)}>Leave this account</button></div></div>`
        : null
    }
    <h2>Pending invitations</h2>
    ${
      invitations.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<ul>${invitations.map(
            (i) => html`<li key=${i.id} data-testid="invitation">${i.email} (${i.role}), until ${when(i.expires_at)}
            <button type="button" class="link" aria-label=${`Revoke the invitation of ${i.email}`} onClick=${act(() => api('DELETE', `/api/v1/members/invitations/${i.id}`), `Invitation of ${i.email} revoked.`)}>Revoke</button></li>`,
          )}</ul>`
    }`
}

mount(Members)
