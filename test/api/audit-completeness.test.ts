// Audit completeness (docs/decisions.md §23): every route that changes something, enumerated from the router,
// writes exactly one audit row naming its actor when it succeeds, and no row holds a key, token, password or
// TOTP secret. A new mutating route without a step here fails the first test.
import test from 'ava'
import { generate } from 'otplib'
import { createRoutes } from '../../api/app.js'
import { startPaymentStandin, type PaymentStandin } from '../../dev/billing-standin/server.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/receivers.js'

const PRICES = [
  { id: 'price_a_starter', label: 'Starter', amount: 9 },
  { id: 'price_a_pro', label: 'Pro', amount: 29 },
  { id: 'price_a_business', label: 'Business', amount: 99 },
]
let app: TestApp
let smtp: SmtpReceiver
let standin: PaymentStandin
test.before(async () => {
  smtp = await startSmtpReceiver()
  standin = await startPaymentStandin({ secretKey: 'sk_test_audit', webhookSecret: 'whsec_audit', prices: PRICES })
  app = await startTestApp({
    SMTP_URL: smtp.url,
    STRIPE_SECRET_KEY: 'sk_test_audit',
    STRIPE_WEBHOOK_SECRET: 'whsec_audit',
    STRIPE_API_BASE: standin.url,
    STRIPE_PRICE_STARTER: PRICES[0].id,
    STRIPE_PRICE_PRO: PRICES[1].id,
    STRIPE_PRICE_BUSINESS: PRICES[2].id,
  })
})
test.after.always(async () => {
  await app?.close()
  await smtp?.close()
  await standin?.close()
})

const codeAt = (secret: string, stepsAhead = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + stepsAhead * 30 })

test('every mutating route writes exactly one audit row naming its actor; no secret in any row', async (t) => {
  const owner = await signUp(app.url)
  const bob = await signUp(app.url)
  const carol = await signUp(app.url)
  const key = await createKey(app.url, owner)
  const secrets: string[] = [owner.password, key.key, owner.session.cookie.split('=')[1], bob.session.cookie.split('=')[1]]
  const s = (u: User) => ({ session: u.session })
  await request(app.url, '/api/v1/stats/orders/count', { json: { count: 1 }, bearer: key.key })
  let alertId = ''
  let dashboardId = ''
  let keyId = ''
  let inviteId = ''
  let totpSecret = ''
  let recovery: string[] = []
  const newPassword = 'another long password 1'
  // Steps in order, each a route as the router declares it, performed by `actor` (a person's id or a key id).
  const steps: Array<{ route: string; actor: () => string; run: () => Promise<Reply> }> = [
    {
      route: 'PATCH /api/v1/account',
      actor: () => owner.accountId,
      run: () => request(app.url, '/api/v1/account', { method: 'PATCH', json: { time_zone: 'Europe/Paris' }, ...s(owner) }),
    },
    {
      route: 'PATCH /api/v1/stats/:name',
      actor: () => key.id,
      run: () => request(app.url, '/api/v1/stats/orders', { method: 'PATCH', json: { description: 'd' }, bearer: key.key }),
    },
    {
      route: 'POST /api/v1/stats/:name/share',
      actor: () => owner.accountId,
      run: () => request(app.url, '/api/v1/stats/orders/share', { method: 'POST', ...s(owner) }),
    },
    {
      route: 'DELETE /api/v1/stats/:name/share',
      actor: () => owner.accountId,
      run: () => request(app.url, '/api/v1/stats/orders/share', { method: 'DELETE', ...s(owner) }),
    },
    {
      route: 'POST /api/v1/alerts',
      actor: () => owner.accountId,
      run: async () => {
        const r = await request(app.url, '/api/v1/alerts', {
          json: {
            stat_name: 'orders',
            condition_type: 'above',
            threshold: 9,
            window_minutes: 5,
            channel: 'webhook',
            channel_config: { webhook_url: 'http://127.0.0.1:9/h' },
          },
          ...s(owner),
        })
        alertId = r.body?.alert?.id
        if (r.body?.signing_secret) secrets.push(r.body.signing_secret)
        return r
      },
    },
    {
      route: 'PATCH /api/v1/alerts/:id',
      actor: () => owner.accountId,
      run: () => request(app.url, `/api/v1/alerts/${alertId}`, { method: 'PATCH', json: { threshold: 10 }, ...s(owner) }),
    },
    {
      route: 'POST /api/v1/alerts/:id/test',
      actor: () => owner.accountId,
      run: () => request(app.url, `/api/v1/alerts/${alertId}/test`, { method: 'POST', ...s(owner) }),
    },
    {
      route: 'DELETE /api/v1/alerts/:id',
      actor: () => owner.accountId,
      run: () => request(app.url, `/api/v1/alerts/${alertId}`, { method: 'DELETE', ...s(owner) }),
    },
    {
      route: 'POST /api/v1/dashboards',
      actor: () => owner.accountId,
      run: async () => {
        const r = await request(app.url, '/api/v1/dashboards', { json: { name: 'D', cards: [{ stats: ['orders'] }] }, ...s(owner) })
        dashboardId = r.body?.dashboard?.id
        return r
      },
    },
    {
      route: 'PATCH /api/v1/dashboards/:id',
      actor: () => owner.accountId,
      run: () => request(app.url, `/api/v1/dashboards/${dashboardId}`, { method: 'PATCH', json: { name: 'E' }, ...s(owner) }),
    },
    {
      route: 'DELETE /api/v1/dashboards/:id',
      actor: () => owner.accountId,
      run: () => request(app.url, `/api/v1/dashboards/${dashboardId}`, { method: 'DELETE', ...s(owner) }),
    },
    {
      route: 'POST /api/v1/import/legacy',
      actor: () => key.id,
      run: () =>
        request(app.url, '/api/v1/import/legacy?kind=counter', {
          method: 'POST',
          bearer: key.key,
          body: 'stat,time,value\nimported,1700000000,1\n',
          headers: { 'content-type': 'text/csv' },
        }),
    },
    // Before the owner hands the account on and is removed: their key then stops (it acts with their role).
    {
      route: 'DELETE /api/v1/stats/:name',
      actor: () => key.id,
      run: () => request(app.url, '/api/v1/stats/orders', { method: 'DELETE', bearer: key.key }),
    },
    {
      route: 'POST /api/v1/auth/api-keys',
      actor: () => owner.accountId,
      run: async () => {
        const r = await request(app.url, '/api/v1/auth/api-keys', { json: { label: 'ci', scope: 'write' }, ...s(owner) })
        keyId = r.body?.api_key?.id
        if (r.body?.key) secrets.push(r.body.key)
        return r
      },
    },
    {
      route: 'DELETE /api/v1/auth/api-keys/:id',
      actor: () => owner.accountId,
      run: () => request(app.url, `/api/v1/auth/api-keys/${keyId}`, { method: 'DELETE', ...s(owner) }),
    },
    {
      route: 'POST /api/v1/members/invitations',
      actor: () => owner.accountId,
      run: async () => {
        const r = await request(app.url, '/api/v1/members/invitations', {
          json: { email: 'someone@example.com', role: 'viewer' },
          ...s(owner),
        })
        inviteId = r.body?.invitation?.id
        return r
      },
    },
    {
      route: 'DELETE /api/v1/members/invitations/:id',
      actor: () => owner.accountId,
      run: () => request(app.url, `/api/v1/members/invitations/${inviteId}`, { method: 'DELETE', ...s(owner) }),
    },
    {
      route: 'POST /api/v1/invitations/accept',
      actor: () => bob.accountId,
      run: async () => {
        await request(app.url, '/api/v1/members/invitations', { json: { email: bob.email, role: 'member' }, ...s(owner) })
        const [mail] = await smtp.waitFor(1, (m) => m.to.includes(bob.email.toLowerCase()))
        const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]
        secrets.push(token)
        // The invitation above is a step of its own (counted there); this step is the acceptance.
        return request(app.url, '/api/v1/invitations/accept', { json: { token }, ...s(bob) })
      },
    },
    {
      route: 'PATCH /api/v1/members/:id',
      actor: () => owner.accountId,
      run: () => request(app.url, `/api/v1/members/${bob.accountId}`, { method: 'PATCH', json: { role: 'admin' }, ...s(owner) }),
    },
    {
      route: 'POST /api/v1/account/leave',
      actor: () => carol.accountId,
      run: async () => {
        // Carol is made a member directly (an invitation would be a step of its own) and switches to the account.
        await app.sql`insert into memberships (account_id, person_id, role) values (${owner.accountId}, ${carol.accountId}, 'viewer')`
        await request(app.url, '/api/v1/session/account', { json: { account_id: owner.accountId }, ...s(carol) })
        return request(app.url, '/api/v1/account/leave', { json: { account_id: owner.accountId }, ...s(carol) })
      },
    },
    {
      route: 'POST /api/v1/account/transfer',
      actor: () => owner.accountId,
      run: () => request(app.url, '/api/v1/account/transfer', { json: { member_id: bob.accountId }, ...s(owner) }),
    },
    {
      route: 'DELETE /api/v1/members/:id',
      actor: () => bob.accountId,
      run: () => request(app.url, `/api/v1/members/${owner.accountId}`, { method: 'DELETE', ...s(bob) }),
    },
    {
      route: 'POST /api/payments/checkout',
      actor: () => bob.accountId,
      run: () => request(app.url, '/api/payments/checkout', { json: { plan: 'pro' }, ...s(bob) }),
    },
    {
      route: 'POST /api/v1/auth/2fa/setup',
      actor: () => owner.accountId,
      run: async () => {
        const r = await request(app.url, '/api/v1/auth/2fa/setup', { method: 'POST', ...s(owner) })
        totpSecret = r.body?.secret
        secrets.push(totpSecret)
        return r
      },
    },
    {
      route: 'POST /api/v1/auth/2fa/enable',
      actor: () => owner.accountId,
      run: async () => {
        const r = await request(app.url, '/api/v1/auth/2fa/enable', { json: { code: await codeAt(totpSecret) }, ...s(owner) })
        recovery = r.body?.recovery_codes ?? []
        secrets.push(...recovery)
        return r
      },
    },
    {
      route: 'POST /api/v1/auth/2fa/recovery-codes',
      actor: () => owner.accountId,
      run: async () => {
        const r = await request(app.url, '/api/v1/auth/2fa/recovery-codes', { json: { code: await codeAt(totpSecret, 1) }, ...s(owner) })
        recovery = r.body?.recovery_codes ?? []
        secrets.push(...recovery)
        return r
      },
    },
    {
      route: 'POST /api/v1/auth/2fa/disable',
      actor: () => owner.accountId,
      run: () => request(app.url, '/api/v1/auth/2fa/disable', { json: { password: owner.password, code: recovery[0] }, ...s(owner) }),
    },
    {
      route: 'POST /api/v1/auth/password',
      actor: () => owner.accountId,
      run: () => {
        secrets.push(newPassword)
        return request(app.url, '/api/v1/auth/password', {
          json: { current_password: owner.password, new_password: newPassword },
          ...s(owner),
        })
      },
    },
  ]

  const mutating = createRoutes()
    .declared.filter((r) => r.audited)
    .map((r) => `${r.method} ${r.path}`)
    .sort()
  t.deepEqual([...steps.map((x) => x.route)].sort(), mutating, 'every audited route of the router has a step here, and only those')

  for (const step of steps) {
    const before = await app.sql<{ id: string }[]>`select max(id)::text as id from audit_events`
    const res = await step.run()
    t.true(res.status >= 200 && res.status < 300, `${step.route}: ${res.status} ${res.text}`)
    const rows = await app.sql<{ actor_id: string; actor_type: string; action: string; target: string }[]>`
      select actor_id, actor_type, action, target from audit_events where id > ${before[0]?.id ?? 0} order by id`
    // The invitation step's own invitation is written before the acceptance; count only the acceptance there.
    const own = step.route === 'POST /api/v1/invitations/accept' ? rows.slice(1) : rows
    t.is(own.length, 1, `${step.route} wrote ${JSON.stringify(own)}`)
    t.is(own[0]?.actor_id, step.actor(), `${step.route} names its actor`)
  }
  const all = JSON.stringify(await app.sql`select * from audit_events`)
  for (const secret of secrets.filter(Boolean)) t.false(all.includes(secret), `a secret of ${secret.length} characters is in an audit row`)
})
