// Teams (docs/decisions.md §23): accounts with members, roles on every route, invitations, key scopes,
// the audit log; real PostgreSQL, Redis and SMTP.
import test from 'ava'
import { createRoutes } from '../../api/app.js'
import { createLogger } from '../../shared/log.js'
import { purgeSessionsJob } from '../../workers/purge-sessions.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { eventually, startSmtpReceiver, type SmtpReceiver } from '../helpers/receivers.js'

let app: TestApp
let smtp: SmtpReceiver
test.before(async () => {
  smtp = await startSmtpReceiver()
  app = await startTestApp({ SMTP_URL: smtp.url })
})
test.after.always(async () => {
  await app?.close()
  await smtp?.close()
})

const RANK = { viewer: 0, member: 1, admin: 2, owner: 3 } as const
type Role = keyof typeof RANK

/** Invites `who` into `owner`'s account with `role` and accepts with the mailed token. */
async function join(owner: User, who: User, role: Role): Promise<void> {
  const inv = await request(app.url, '/api/v1/members/invitations', { json: { email: who.email, role }, session: owner.session })
  if (inv.status !== 201) throw new Error(`invite: ${inv.status} ${inv.text}`)
  const [mail] = await smtp.waitFor(1, (m) => m.to.includes(who.email.toLowerCase()) && m.text.includes('invitation?token='))
  const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]
  const acc = await request(app.url, '/api/v1/invitations/accept', { json: { token }, session: who.session })
  if (acc.status !== 200) throw new Error(`accept: ${acc.status} ${acc.text}`)
}

async function tokenFor(email: string, n = 1): Promise<string> {
  const mails = await smtp.waitFor(n, (m) => m.to.includes(email.toLowerCase()) && m.text.includes('invitation?token='))
  return /token=([A-Za-z0-9_-]+)/.exec(mails[n - 1].text)![1]
}

const counts = async () => {
  const [r] = await app.sql`
    select (select count(*) from memberships)::int as m, (select count(*) from invitations)::int as i,
           (select count(*) from audit_events)::int as a, (select count(*) from api_keys)::int as k, (select count(*) from alerts)::int as al`
  return r
}

test.serial('a sign-up is a person and their first account, its sole owner; GET /api/v1/accounts lists it', async (t) => {
  const u = await signUp(app.url)
  const res = await request(app.url, '/api/v1/accounts', { session: u.session })
  t.is(res.status, 200, res.text)
  t.deepEqual(res.body.accounts, [{ id: u.accountId, email: u.email, plan: 'free', role: 'owner', active: true }])
  const members = await request(app.url, '/api/v1/members', { session: u.session })
  t.is(members.body.members.length, 1)
  t.is(members.body.members[0].role, 'owner')
})

test.serial(
  'invitation tokens: another person, reuse and unknown are refused with nothing created; the same answer for known and unknown addresses',
  async (t) => {
    const alice = await signUp(app.url)
    const bob = await signUp(app.url)
    const carol = await signUp(app.url)
    const known = await request(app.url, '/api/v1/members/invitations', {
      json: { email: bob.email, role: 'member' },
      session: alice.session,
    })
    const unknown = await request(app.url, '/api/v1/members/invitations', {
      json: { email: `nobody.${Date.now()}@example.com`, role: 'member' },
      session: alice.session,
    })
    t.is(known.status, 201, known.text)
    t.is(unknown.status, 201, unknown.text)
    t.deepEqual(Object.keys(known.body.invitation).sort(), Object.keys(unknown.body.invitation).sort())
    t.false(known.text.includes('token'), 'the token travels only in the mail')
    const token = await tokenFor(bob.email)

    const before = await counts()
    const other = await request(app.url, '/api/v1/invitations/accept', { json: { token }, session: carol.session })
    t.is(other.status, 403)
    t.is(other.body.code, 'invitation_email_mismatch')
    const bad = await request(app.url, '/api/v1/invitations/accept', { json: { token: 'x'.repeat(43) }, session: bob.session })
    t.is(bad.status, 400)
    t.is(bad.body.code, 'invalid_invitation')
    t.deepEqual(await counts(), before, 'nothing created')

    const ok = await request(app.url, '/api/v1/invitations/accept', { json: { token }, session: bob.session })
    t.is(ok.status, 200, ok.text)
    t.deepEqual(ok.body, { account: { id: alice.accountId, email: alice.email }, role: 'member' })
    const afterOk = await counts()
    const reuse = await request(app.url, '/api/v1/invitations/accept', { json: { token }, session: bob.session })
    t.is(reuse.status, 400)
    t.is(reuse.body.code, 'invalid_invitation')
    t.deepEqual(await counts(), afterOk, 'a reused token creates nothing')

    // Expiry: an invitation past its 7 days is refused alike.
    const dave = await signUp(app.url)
    await request(app.url, '/api/v1/members/invitations', { json: { email: dave.email, role: 'viewer' }, session: alice.session })
    const daveToken = await tokenFor(dave.email)
    await app.sql`update invitations set expires_at = now() - interval '1 second' where email = ${dave.email.toLowerCase()}`
    const beforeExpired = await counts()
    const expired = await request(app.url, '/api/v1/invitations/accept', { json: { token: daveToken }, session: dave.session })
    t.is(expired.status, 400)
    t.is(expired.body.code, 'invalid_invitation')
    t.deepEqual(await counts(), beforeExpired)
  },
)

test.serial('two accounts sharing a person: switching shows each its own stats and keys; a key of one never reads the other', async (t) => {
  const alice = await signUp(app.url)
  const bob = await signUp(app.url)
  const aliceKey = await createKey(app.url, alice)
  const bobKey = await createKey(app.url, bob)
  t.is((await request(app.url, '/api/v1/stats/alice_only/count', { json: { count: 1 }, bearer: aliceKey.key })).status, 200)
  t.is((await request(app.url, '/api/v1/stats/bob_only/count', { json: { count: 1 }, bearer: bobKey.key })).status, 200)
  await join(alice, bob, 'admin')
  const names = async () => {
    const r = await request(app.url, '/api/v1/stats', { session: bob.session })
    return (r.body.stats as { name: string }[]).map((s) => s.name)
  }
  await eventually(async () => ((await names()).includes('alice_only') ? true : undefined), "alice's stat")
  t.false((await names()).includes('bob_only'), "alice's account shows none of bob's stats")
  const keys = await request(app.url, '/api/v1/auth/api-keys', { session: bob.session })
  t.deepEqual(
    keys.body.api_keys.map((k: { id: string }) => k.id),
    [aliceKey.id],
  )
  const audit = await request(app.url, '/api/v1/audit', { session: bob.session })
  t.true(audit.body.events.every((e: { target: string }) => !e.target.includes(bob.accountId) || e.target.startsWith('invitation')))

  const sw = await request(app.url, '/api/v1/session/account', { json: { account_id: bob.accountId }, session: bob.session })
  t.is(sw.status, 200, sw.text)
  await eventually(async () => ((await names()).includes('bob_only') ? true : undefined), "bob's stat")
  t.false((await names()).includes('alice_only'))
  // Bob's own key reads only bob's account, whatever the session does.
  const viaKey = await request(app.url, '/api/v1/stats/alice_only', { bearer: bobKey.key })
  t.is(viaKey.status, 404)
  // Not a member: switching is refused like an unknown account.
  const carol = await signUp(app.url)
  const nope = await request(app.url, '/api/v1/session/account', { json: { account_id: alice.accountId }, session: carol.session })
  t.is(nope.status, 404)
})

test.serial(
  'role matrix: every session route of the router, each role gets 403 forbidden_role below the declared role and passes at or above; a 403 changes nothing',
  async (t) => {
    const owner = await signUp(app.url)
    const users: Record<Role, User> = { owner, admin: await signUp(app.url), member: await signUp(app.url), viewer: await signUp(app.url) }
    for (const r of ['admin', 'member', 'viewer'] as const) await join(owner, users[r], r)
    const routes = createRoutes().declared.filter((r) => r.auth.includes('session') && r.access.role !== 'person')
    t.true(routes.length > 40, `enumerated ${routes.length} routes`)
    const before = await counts()
    let refused = 0
    for (const route of routes) {
      const need = route.access.role as Role
      const path = route.path.replace(/:[A-Za-z_]+/g, '00000000-0000-4000-8000-000000000000')
      for (const role of ['viewer', 'member', 'admin'] as Role[]) {
        const res = await request(app.url, path, {
          method: route.method,
          session: users[role].session,
          ...(route.method === 'GET' ? {} : { json: {} }),
        })
        if (RANK[role] < RANK[need]) {
          t.is(res.status, 403, `${role} ${route.method} ${route.path}: ${res.text}`)
          t.is(res.body?.code, 'forbidden_role', `${role} ${route.method} ${route.path}`)
          t.true(res.body?.detail.includes(`${need} role`), res.text)
          refused++
        } else {
          t.not(res.status, 403, `${role} ${route.method} ${route.path}: ${res.text}`)
          // A GET needing no id and no query answers 2xx to every role it allows.
          if (route.method === 'GET' && !route.path.includes(':') && res.status !== 400)
            t.true(res.status >= 200 && res.status < 400, `${role} ${route.method} ${route.path}: ${res.status} ${res.text.slice(0, 200)}`)
        }
      }
    }
    t.true(refused > 20)
    const after = await counts()
    t.deepEqual({ ...after, a: 0 }, { ...before, a: 0 }, 'no membership, invitation, key or alert changed')
    t.is(after.a, before.a, 'no audit row: nothing changed')
  },
)

test.serial('the last owner cannot be removed or demoted (409 last_owner); ownership can be transferred', async (t) => {
  const alice = await signUp(app.url)
  const bob = await signUp(app.url)
  await join(alice, bob, 'admin')
  const demote = await request(app.url, `/api/v1/members/${alice.accountId}`, {
    method: 'PATCH',
    json: { role: 'admin' },
    session: alice.session,
  })
  t.is(demote.status, 409)
  t.is(demote.body.code, 'last_owner')
  const remove = await request(app.url, `/api/v1/members/${alice.accountId}`, { method: 'DELETE', session: alice.session })
  t.is(remove.status, 409)
  const byAdmin = await request(app.url, `/api/v1/members/${alice.accountId}`, { method: 'DELETE', session: bob.session })
  t.is(byAdmin.status, 403)
  t.is(byAdmin.body.code, 'forbidden_role')
  const [m] = await app.sql`select count(*)::int as n from memberships where account_id = ${alice.accountId}`
  t.is(m.n, 2)
  const tr = await request(app.url, '/api/v1/account/transfer', { json: { member_id: bob.accountId }, session: alice.session })
  t.is(tr.status, 200, tr.text)
  const roles = Object.fromEntries(tr.body.members.map((x: { email: string; role: string }) => [x.email, x.role]))
  t.deepEqual(roles, { [alice.email]: 'admin', [bob.email]: 'owner' })
})

test.serial('removal is refused from the next request, in another process too (no cache outlives it)', async (t) => {
  const other = await app.another()
  try {
    const alice = await signUp(app.url)
    const bob = await signUp(app.url)
    await join(alice, bob, 'member')
    t.is((await request(other.url, '/api/v1/stats', { session: bob.session })).status, 200)
    const del = await request(app.url, `/api/v1/members/${bob.accountId}`, { method: 'DELETE', session: alice.session })
    t.is(del.status, 204, del.text)
    // The role is read from PostgreSQL on every request: the very next request, in the other process, is refused.
    const refused = await request(other.url, '/api/v1/stats', { session: bob.session })
    t.is(refused.status, 403)
    t.is(refused.body.code, 'not_a_member')
    // They can still list and switch to their own account.
    const sw = await request(other.url, '/api/v1/session/account', { json: { account_id: bob.accountId }, session: bob.session })
    t.is(sw.status, 200)
  } finally {
    await other.close()
  }
})

test.serial(
  'key scopes: a write key only ingests, a read key only reads (403 forbidden_scope, legacy envelope on /c); nothing stored',
  async (t) => {
    const u = await signUp(app.url)
    const w = await request(app.url, '/api/v1/auth/api-keys', { json: { label: 'telegraf', scope: 'write' }, session: u.session })
    const r = await request(app.url, '/api/v1/auth/api-keys', { json: { label: 'grafana', scope: 'read' }, session: u.session })
    t.is(w.body.api_key.scope, 'write')
    t.is((await request(app.url, '/api/v1/stats/s/count', { json: { count: 1 }, bearer: w.body.key })).status, 200)
    const wRead = await request(app.url, '/api/v1/stats', { bearer: w.body.key })
    t.is(wRead.status, 403)
    t.is(wRead.body.code, 'forbidden_scope')
    const rWrite = await request(app.url, '/api/v1/stats/t/count', { json: { count: 1 }, bearer: r.body.key })
    t.is(rWrite.status, 403)
    t.is(rWrite.body.code, 'forbidden_scope')
    t.is((await request(app.url, '/api/v1/stats', { bearer: r.body.key })).status, 200)
    const legacy = await request(app.url, '/c', { form: `ukey=${r.body.key}&stat=t&count=1` })
    // The legacy envelope: 200 unless strict, the body's status is the verdict.
    t.is(legacy.status, 200)
    t.is(legacy.body.status, 'error', legacy.text)
    t.regex(legacy.body.msg, /read scope/)
    const [n] = await app.sql`select count(*)::int as n from stats where account_id = ${u.accountId} and name = 't'`
    t.is(n.n, 0)
  },
)

test.serial('audit: every change names its actor, newest first, paged; no secret in any row', async (t) => {
  const alice = await signUp(app.url)
  const bob = await signUp(app.url)
  await join(alice, bob, 'member')
  const key = await request(app.url, '/api/v1/auth/api-keys', { json: { label: 'k' }, session: alice.session })
  await request(app.url, `/api/v1/members/${bob.accountId}`, { method: 'PATCH', json: { role: 'viewer' }, session: alice.session })
  const res = await request(app.url, '/api/v1/audit', { session: alice.session })
  t.is(res.status, 200, res.text)
  const actions = res.body.events.map((e: { action: string }) => e.action)
  t.deepEqual(actions.slice(0, 3), ['patchMembersById', 'postAuthApiKeys', 'postInvitationsAccept'])
  t.is(res.body.events[0].actor.email, alice.email)
  t.deepEqual(res.body.events[0].summary, { before: { role: 'member' }, after: { role: 'viewer' } })
  t.is(res.body.events[2].actor.email, bob.email)
  const viewer = await request(app.url, '/api/v1/audit', { session: bob.session })
  t.is(viewer.body.code, 'forbidden_role')
  const all = JSON.stringify(await app.sql`select * from audit_events`)
  t.false(all.includes(key.body.key), 'no key')
  t.false(all.includes(alice.password), 'no password')
  t.false(all.includes(alice.session.cookie.split('=')[1]), 'no session token')
  const tokens = await app.sql`select token_hash from invitations`
  t.true(tokens.length > 0)
})

test.serial('audit paging: newest first, 50 a page, next_cursor walks every row once', async (t) => {
  const u = await signUp(app.url)
  for (let i = 0; i < 60; i++)
    await request(app.url, '/api/v1/account', { method: 'PATCH', json: { time_zone: i % 2 ? 'Europe/Paris' : 'UTC' }, session: u.session })
  const first = await request(app.url, '/api/v1/audit', { session: u.session })
  t.is(first.body.events.length, 50)
  t.truthy(first.body.next_cursor)
  const second = await request(app.url, `/api/v1/audit?cursor=${first.body.next_cursor}`, { session: u.session })
  const ids = [...first.body.events, ...second.body.events].map((e: { id: string }) => Number(e.id))
  t.is(ids.length, 61, 'sixty changes and the sign-up')
  t.deepEqual(
    ids,
    [...ids].sort((a, b) => b - a),
    'newest first, across pages',
  )
  t.is(new Set(ids).size, ids.length)
  t.is(second.body.next_cursor, null)
  t.is(second.body.events.at(-1).action, 'postAuthSignup')
})

test.serial("a key acts with at most its creator's role, and a removed member's keys stop", async (t) => {
  const alice = await signUp(app.url)
  const bob = await signUp(app.url)
  await join(alice, bob, 'member')
  const made = await request(app.url, '/api/v1/auth/api-keys', { json: { label: 'bob laptop' }, session: bob.session })
  t.is(made.status, 201, made.text)
  const key = made.body.key as string
  t.is((await request(app.url, '/api/v1/stats/bobs/count', { json: { count: 1 }, bearer: key })).status, 200)
  const admin = await request(app.url, '/api/v1/account', { method: 'PATCH', json: { time_zone: 'UTC' }, bearer: key })
  t.is(admin.status, 403)
  t.is(admin.body.code, 'forbidden_role')
  const [acc] = await app.sql`select time_zone from accounts where id = ${alice.accountId}`
  t.is(acc.time_zone, null, 'nothing changed')
  t.is((await request(app.url, `/api/v1/members/${bob.accountId}`, { method: 'DELETE', session: alice.session })).status, 204)
  // The key resolver re-reads a key in use within a second: wait for the refusal.
  const refused = await eventually(async () => {
    const r = await request(app.url, '/api/v1/stats/bobs/count', { json: { count: 1 }, bearer: key })
    return r.status === 403 ? r : null
  }, "the removed member's key refused")
  t.is(refused.body.code, 'forbidden_role')
  const legacy = await request(app.url, '/c', { form: `ukey=${key}&stat=bobs&count=1` })
  t.is(legacy.body.status, 'error')
})

test.serial('audit rows are kept 400 days: the maintenance purge deletes older ones, and ended invitations', async (t) => {
  const u = await signUp(app.url)
  await request(app.url, '/api/v1/account', { method: 'PATCH', json: { time_zone: 'UTC' }, session: u.session })
  await app.sql`update audit_events set at = now() - interval '401 days' where account_id = ${u.accountId} and action = 'postAuthSignup'`
  await app.sql`update audit_events set at = now() - interval '399 days' where account_id = ${u.accountId} and action = 'patchAccount'`
  const result = await purgeSessionsJob(
    { config: app.config, sql: app.sql, log: createLogger({ logLevel: 'silent' }), queues: app.api.deps.queues },
    {},
    new Date(),
  )
  t.true(result.audit >= 1)
  const rows = await app.sql`select action from audit_events where account_id = ${u.accountId}`
  t.deepEqual(
    rows.map((r) => r.action),
    ['patchAccount'],
  )
})

test.serial(
  'invitation mails are throttled: 3 inviting accounts per address a day, 10 invitations per account a day; past either, 429 with nothing stored or sent',
  async (t) => {
    const invite = (from: User, email: string) =>
      request(app.url, '/api/v1/members/invitations', { json: { email, role: 'member' }, session: from.session })
    const rowsTo = async (email: string) => {
      const [r] = await app.sql<{ n: number }[]>`select count(*)::int as n from invitations where email = ${email.toLowerCase()}`
      return r.n
    }
    const mailsTo = (email: string) => smtp.mails.filter((m) => m.to.includes(email.toLowerCase())).length

    // Per address: three accounts invite it, the fourth is refused.
    const address = `wanted.${Date.now()}@example.com`
    const inviters = [await signUp(app.url), await signUp(app.url), await signUp(app.url), await signUp(app.url)]
    for (const u of inviters.slice(0, 3)) t.is((await invite(u, address)).status, 201)
    t.is(mailsTo(address), 3)
    const before = await counts()
    const refused = await invite(inviters[3], address)
    t.is(refused.status, 429, refused.text)
    t.is(refused.body.code, 'invitation_mail_throttled')
    t.regex(refused.body.detail, new RegExp(`^too many invitations to ${address.replace(/\./g, '\\.')} today; nothing was stored`))
    t.truthy(refused.headers.get('retry-after'))
    t.deepEqual(await counts(), before, 'no invitation or audit row')
    t.is(await rowsTo(address), 3)
    t.is(mailsTo(address), 3, 'no fourth mail')
    // An account already counted may invite the address again (it replaces its own link).
    t.is((await invite(inviters[0], address)).status, 201)

    // Per account: ten invitations, the eleventh is refused.
    const owner = await signUp(app.url)
    const tag = owner.accountId.slice(0, 8)
    for (let i = 0; i < 10; i++) t.is((await invite(owner, `n${i}.${tag}@example.com`)).status, 201)
    const eleventh = `n10.${tag}@example.com`
    const beforeAccount = await counts()
    const over = await invite(owner, eleventh)
    t.is(over.status, 429, over.text)
    t.is(over.body.code, 'invitation_mail_throttled')
    t.regex(over.body.detail, /this account has sent its 10 invitations for today; nothing was stored/)
    t.deepEqual(await counts(), beforeAccount, 'no invitation or audit row')
    t.is(await rowsTo(eleventh), 0)
    t.is(mailsTo(eleventh), 0)
  },
)

test.serial(
  'a member leaves an account (POST /api/v1/account/leave), audited; the last owner cannot (409 last_owner); naming another account is 409 with nothing changed',
  async (t) => {
    const alice = await signUp(app.url)
    const bob = await signUp(app.url)
    await join(alice, bob, 'viewer')
    const leave = (u: User, accountId: string) =>
      request(app.url, '/api/v1/account/leave', { json: { account_id: accountId }, session: u.session })
    const memberships = async (accountId: string) =>
      (
        await app.sql<{ person_id: string; role: string }[]>`
      select person_id, role from memberships where account_id = ${accountId} order by person_id`
      ).map((r) => `${r.person_id}:${r.role}`)

    const before = await counts()
    const lastOwner = await leave(alice, alice.accountId)
    t.is(lastOwner.status, 409, lastOwner.text)
    t.is(lastOwner.body.code, 'last_owner')
    t.regex(lastOwner.body.detail, /the account must keep an owner/)
    // Bob's session acts on alice's account since he accepted; naming his own is refused.
    const wrong = await leave(bob, bob.accountId)
    t.is(wrong.status, 409, wrong.text)
    t.is(wrong.body.code, 'not_active_account')
    t.regex(wrong.body.detail, /not the account this session acts on; nothing was changed/)
    const missing = await request(app.url, '/api/v1/account/leave', { json: {}, session: bob.session })
    t.is(missing.status, 400, missing.text)
    t.deepEqual(await counts(), before, 'no membership or audit row changed')
    t.is((await memberships(alice.accountId)).length, 2)

    const ok = await leave(bob, alice.accountId)
    t.is(ok.status, 200, ok.text)
    t.deepEqual(ok.body.accounts, [{ id: bob.accountId, email: bob.email, plan: 'free', role: 'owner', active: true }])
    t.deepEqual(await memberships(alice.accountId), [`${alice.accountId}:owner`])
    // The session now acts on bob's own account.
    const members = await request(app.url, '/api/v1/members', { session: bob.session })
    t.deepEqual(
      members.body.members.map((m: { email: string }) => m.email),
      [bob.email],
    )
    const audit = await request(app.url, '/api/v1/audit', { session: alice.session })
    t.is(audit.body.events[0].action, 'postAccountLeave')
    t.is(audit.body.events[0].actor.email, bob.email)
    t.is(audit.body.events[0].target, `member:${bob.accountId}`)
    t.deepEqual(audit.body.events[0].summary, { before: { email: bob.email, role: 'viewer' } })
  },
)
