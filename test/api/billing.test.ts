// Billing (docs/decisions.md §I-4.6, §I-5.3; §9, §14) end to end: the real stripe
// SDK against the local payment stand-in, its hosted pages, signed events to
// the webhook, the per-customer sync job in a real worker, and the plan in force.
import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { eventually } from '../helpers/receivers.js'
import { startPaymentStandin, type PaymentStandin } from '../../dev/billing-standin/server.js'
import { evaluateAlerts } from '../../shared/alerts/evaluate.js'

const PRICES = [
  { id: 'price_t_starter', label: 'Starter', amount: 9 },
  { id: 'price_t_pro', label: 'Pro', amount: 29 },
  { id: 'price_t_business', label: 'Business', amount: 99 },
]
const SECRET_KEY = 'sk_test_billing_suite'
const WEBHOOK_SECRET = 'whsec_billing_suite_secret'

let standin: PaymentStandin
test.before(async () => {
  standin = await startPaymentStandin({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, prices: PRICES })
})
const app = appSuite({
  env: () => ({
    STRIPE_SECRET_KEY: SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE: standin.url,
    STRIPE_PRICE_STARTER: PRICES[0].id,
    STRIPE_PRICE_PRO: PRICES[1].id,
    STRIPE_PRICE_BUSINESS: PRICES[2].id,
    ALERT_EVAL_INTERVAL_SECONDS: '86400', // the test runs its own evaluation pass
  }),
})
test.before(async () => {
  standin.setWebhookUrl(`${app.url}/api/payments/webhook`)
  await app.startWorkers()
})
test.serial.after.always(() => standin?.close())

const planOf = async (accountId: string) => (await app.sql<{ plan: string }[]>`select plan from accounts where id = ${accountId}`)[0].plan
const waitForPlan = (accountId: string, plan: string) => eventually(async () => (await planOf(accountId)) === plan, `plan ${plan}`, 20_000)

async function checkout(u: User, plan: string) {
  const res = await request(app.url, '/api/payments/checkout', { json: { plan }, session: u.session })
  if (res.status !== 200) throw new Error(`checkout: ${res.status} ${res.text}`)
  const session = standin.sessions.get(res.body.id)!
  return { ...(res.body as { url: string; id: string }), customer: session.customer as string }
}

/** Checkout and pay on the stand-in's hosted page (the form's POST), as a browser would; returns the customer and subscription. */
async function subscribe(u: User, plan: string, opts: { hold?: boolean } = {}) {
  const c = await checkout(u, plan)
  if (opts.hold) standin.hold(c.customer)
  const paid = await fetch(c.url, { method: 'POST', redirect: 'manual' })
  if (paid.status !== 303) throw new Error(`payment: ${paid.status}`)
  return { ...c, success: paid.headers.get('location')!, subscription: standin.sessions.get(c.id)!.subscription as string }
}

test('checkout: hosted page, payment, signed events, and the plan in force in every API process', async (t) => {
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  const c = await checkout(u, 'pro')
  t.true(c.url.startsWith(`${standin.url}/checkout/`))
  const page = await fetch(c.url)
  const html = await page.text()
  t.is(page.status, 200)
  t.regex(html, /Subscribe to Pro/)
  t.is((html.match(/<form method="post"/g) ?? []).length, 1)
  // The customer was created first and kept on the account, with the account id in the provider's metadata.
  t.is(standin.customers.get(c.customer)?.metadata.account_id, u.accountId)
  t.is((await app.sql`select customer_id from billing_customers where account_id = ${u.accountId}`)[0].customer_id, c.customer)
  // What the SDK sent: a subscription for the configured price, the account in the session's and the subscription's metadata.
  const sent = standin.requests.find((r) => r.path === '/v1/checkout/sessions' && r.form.customer === c.customer)!.form
  t.like(sent, {
    mode: 'subscription',
    client_reference_id: u.accountId,
    line_items: [{ price: PRICES[1].id, quantity: '1' }],
    metadata: { account_id: u.accountId, plan: 'pro' },
    subscription_data: { metadata: { account_id: u.accountId, plan: 'pro' } },
  })
  t.is(sent.success_url, `${app.url}/api/billing/return?session_id={CHECKOUT_SESSION_ID}`)

  const paid = await fetch(c.url, { method: 'POST', redirect: 'manual' })
  t.is(paid.status, 303)
  t.is(paid.headers.get('location'), `${app.url}/api/billing/return?session_id=${c.id}`)
  await waitForPlan(u.accountId, 'pro')
  // The plan can be in force before the stand-in has sent the last of the payment's three events.
  const delivered = () => standin.deliveries.filter((d) => standin.eventsOf(c.customer).some((e) => e.id === d.eventId))
  await eventually(() => delivered().length >= 3, 'the three events delivered', 20_000)
  t.deepEqual(
    delivered().map((d) => d.status),
    [200, 200, 200],
  )

  // Limits follow at once, in this process and in another one.
  const other = await app.another({ STRIPE_SECRET_KEY: SECRET_KEY })
  for (const base of [app.url, other.url]) t.is((await request(base, '/api/v1/auth/me', { bearer: key })).body.account.plan, 'pro')
  const alerts = await Promise.all(
    [1, 2, 3].map((i) =>
      request(other.url, '/api/v1/alerts', {
        bearer: key,
        json: {
          stat_name: `s${i}`,
          condition_type: 'above',
          threshold: 1,
          window_minutes: 5,
          channel: 'webhook',
          channel_config: { webhook_url: 'http://127.0.0.1:9/h' },
        },
      }),
    ),
  )
  t.deepEqual(
    alerts.map((r) => r.status),
    [201, 201, 201],
  ) // the free plan allows 2

  // The browser's return syncs at once and lands on the service.
  const back = await request(app.url, new URL(paid.headers.get('location')!).pathname + new URL(paid.headers.get('location')!).search, {
    session: u.session,
  })
  t.is(back.status, 303)
  t.is(back.headers.get('location'), '/?billing=updated')
  const state = await request(app.url, '/api/billing', { session: u.session })
  t.like(state.body, { plan: 'pro', subscription: { status: 'active', past_due: false } })
})

test("a second checkout while subscribed is 409 pointing at the portal, even before the payment's events arrived; no session is created", async (t) => {
  const u = await signUp(app.url)
  const { customer } = await subscribe(u, 'starter', { hold: true })
  t.is(await planOf(u.accountId), 'free')
  const sessionsOf = () => [...standin.sessions.values()].filter((s) => s.customer === customer).length
  const sessions = sessionsOf()
  const res = await request(app.url, '/api/payments/checkout', { json: { plan: 'pro' }, session: u.session })
  t.is(res.status, 409)
  t.is(res.body.code, 'already_subscribed')
  t.regex(res.body.detail, /\/api\/billing\/portal/)
  t.is(sessionsOf(), sessions)
})

test('portal: 302 to the provider; switching plan and cancelling take effect; a downgrade deletes nothing and pauses alerts above the count', async (t) => {
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  const { subscription } = await subscribe(u, 'starter')
  await waitForPlan(u.accountId, 'starter')
  const names = Array.from({ length: 12 }, (_, i) => `portal stat ${i}`)
  for (const name of names)
    t.is((await request(app.url, `/api/v1/stats/${encodeURIComponent(name)}/count`, { bearer: key, json: { count: 1 } })).status, 200)
  for (let i = 0; i < 4; i++) {
    const r = await request(app.url, '/api/v1/alerts', {
      bearer: key,
      json: {
        stat_name: names[i],
        condition_type: 'above',
        threshold: 1e9,
        window_minutes: 5,
        channel: 'webhook',
        channel_config: { webhook_url: 'http://127.0.0.1:9/h' },
      },
    })
    t.is(r.status, 201)
  }

  const portal = await request(app.url, '/api/billing/portal', { session: u.session })
  t.is(portal.status, 302)
  const portalUrl = portal.headers.get('location')!
  t.true(portalUrl.startsWith(`${standin.url}/portal/`))
  const html = await (await fetch(portalUrl)).text()
  t.regex(html, /Cancel subscription/)
  t.regex(html, /Switch to Pro/)

  const post = (action: string, fields: Record<string, string>) =>
    fetch(`${portalUrl}/${action}`, { method: 'POST', body: new URLSearchParams(fields), redirect: 'manual' })
  const switched = await post('switch', { subscription, price: PRICES[2].id })
  t.is(switched.headers.get('location'), `${app.url}/api/billing/return`)
  await waitForPlan(u.accountId, 'business')

  const before = await request(app.url, '/api/billing', { session: u.session })
  t.like(before.body.subscription, { status: 'active', in_force: true })
  t.is((await post('cancel', { subscription })).status, 303)
  await waitForPlan(u.accountId, 'free')
  // A canceled subscription is no longer the plan's source; nothing renews.
  const after = await request(app.url, '/api/billing', { session: u.session })
  t.like(after.body, { plan: 'free', subscription: { status: 'canceled', in_force: false } })
  // Nothing deleted: 12 stats (free tracks 10) and 4 alerts (free allows 2) are all kept.
  t.is((await app.sql`select count(*)::int as n from stats where account_id = ${u.accountId}`)[0].n, 12)
  const list = await request(app.url, '/api/v1/alerts', { bearer: key })
  t.deepEqual(
    list.body.alerts.map((a: { paused: boolean }) => a.paused),
    [false, false, true, true],
  )
  // No new stat above the limit, once this API process has the new plan (within seconds: its key cache
  // holds the account briefly). Polled on a read, since a write in that window would create the stat.
  let plan = ''
  for (let i = 0; i < 100 && plan !== 'free'; i++) {
    if (i) await new Promise((r) => setTimeout(r, 100))
    plan = (await request(app.url, '/api/v1/auth/me', { bearer: key })).body?.account?.plan
  }
  t.is(plan, 'free')
  t.is((await request(app.url, '/api/v1/stats/one%20more/count', { bearer: key, json: { count: 1 } })).status, 403)
  t.is((await request(app.url, `/api/v1/stats/${encodeURIComponent(names[11])}/count`, { bearer: key, json: { count: 1 } })).status, 200)
  // Paused alerts are not evaluated (a pass at a later time than any scheduled one).
  const later = new Date(Date.now() + 3_600_000)
  await eventually(async () => !(await evaluateAlerts(app.sql, later)).skipped, 'an evaluation pass')
  const evaluated = await app.sql<
    { e: boolean }[]
  >`select last_evaluated_at is not distinct from ${later} as e from alerts where account_id = ${u.accountId} order by created_at, id`
  t.deepEqual(
    evaluated.map((r) => r.e),
    [true, true, false, false],
  )
})

test('renewal keeps the plan and moves the period; a failed payment keeps it flagged past due; given up, back to free', async (t) => {
  const u = await signUp(app.url)
  const { subscription } = await subscribe(u, 'pro')
  await waitForPlan(u.accountId, 'pro')
  const periodEnd = async () =>
    (await app.sql`select current_period_end as e from billing_customers where account_id = ${u.accountId}`)[0].e as Date
  const before = await eventually(periodEnd, 'first sync')
  standin.renew(subscription)
  await eventually(async () => (await periodEnd()).getTime() > before.getTime(), 'renewed period')
  t.is(await planOf(u.accountId), 'pro')

  standin.failPayment(subscription)
  await eventually(
    async () => (await app.sql`select past_due from billing_customers where account_id = ${u.accountId}`)[0].past_due,
    'past due flag',
  )
  t.is(await planOf(u.accountId), 'pro')
  t.like((await request(app.url, '/api/billing', { session: u.session })).body, {
    plan: 'pro',
    subscription: { status: 'past_due', past_due: true },
  })

  standin.failPayment(subscription, { final: true })
  await waitForPlan(u.accountId, 'free')
  t.like((await request(app.url, '/api/billing', { session: u.session })).body, {
    plan: 'free',
    subscription: { status: 'unpaid', past_due: false },
  })
})

test('events delivered twice, late and out of order cannot set a wrong plan; a duplicate answers 200 and does nothing', async (t) => {
  const u = await signUp(app.url)
  const { customer, subscription } = await subscribe(u, 'pro', { hold: true })
  t.is(await planOf(u.accountId), 'free') // nothing delivered yet
  const completed = standin.eventsOf(customer, 'checkout.session.completed')[0]
  const created = standin.eventsOf(customer, 'customer.subscription.created')[0]
  standin.cancel(subscription)
  const deleted = standin.eventsOf(customer, 'customer.subscription.deleted')[0]

  // The cancellation arrives first, twice; the older events after it.
  const first = await standin.deliver(deleted)
  t.is(first.status, 200)
  t.deepEqual(JSON.parse(first.body), { received: true, duplicate: false })
  t.deepEqual(JSON.parse((await standin.deliver(deleted)).body), { received: true, duplicate: true })
  for (const e of [created, completed, created]) t.is((await standin.deliver(e)).status, 200)
  const stored = await app.sql`select id from billing_events where customer_id = ${customer}`
  t.is(stored.length, 3)
  // Every sync re-fetched the subscription: cancelled, so free, whatever the order.
  await eventually(
    async () => (await app.sql`select synced_at from billing_customers where account_id = ${u.accountId}`)[0].synced_at,
    'a sync',
  )
  await eventually(
    async () =>
      (
        await app.sql`select count(*)::int as n from billing_customers where account_id = ${u.accountId} and subscription_status = 'canceled'`
      )[0].n === 1,
    'cancelled seen',
  )
  t.is(await planOf(u.accountId), 'free')
})

test('bad signature, changed body, stale timestamp, missing header: 400 and nothing stored or changed', async (t) => {
  const u = await signUp(app.url)
  const { customer } = await subscribe(u, 'business', { hold: true })
  const e = standin.eventsOf(customer, 'customer.subscription.created')[0]
  const cases = [
    { name: 'wrong secret', o: { secret: 'whsec_not_the_one' }, detail: /signature verification failed/ },
    { name: 'changed body', o: { body: e.body.replace('"active"', '"trialing"') }, detail: /signature verification failed/ },
    { name: 'stale timestamp', o: { timestamp: Math.floor(Date.now() / 1000) - 600 }, detail: /tolerance/ },
  ]
  for (const c of cases) {
    const d = await standin.deliver(e, c.o)
    t.is(d.status, 400, c.name)
    t.is(JSON.parse(d.body).code, 'signature_invalid', c.name)
    t.regex(JSON.parse(d.body).detail, c.detail, c.name)
  }
  const bare = await request(app.url, '/api/payments/webhook', { body: e.body, headers: { 'content-type': 'application/json' } })
  t.is(bare.status, 400)
  t.is(bare.body.code, 'signature_missing')
  t.is((await app.sql`select id from billing_events where id = ${e.id}`).length, 0)
  t.is(await planOf(u.accountId), 'free')
  // The genuine delivery is then accepted.
  t.is((await standin.deliver(e)).status, 200)
  await waitForPlan(u.accountId, 'business')
})

test('checkout errors: unknown or free plan 400, Bearer 403, no session 401, no CSRF header 403; nothing stored', async (t) => {
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  const customersOf = () => [...standin.customers.values()].filter((c) => c.metadata.account_id === u.accountId).length
  for (const plan of ['free', 'gold']) {
    const r = await request(app.url, '/api/payments/checkout', { json: { plan }, session: u.session })
    t.is(r.status, 400, plan)
    t.regex(r.body.detail, /starter, pro, business/)
  }
  t.is((await request(app.url, '/api/payments/checkout', { json: {}, session: u.session })).status, 400)
  const bearer = await request(app.url, '/api/payments/checkout', { json: { plan: 'pro' }, bearer: key })
  t.is(bearer.status, 403)
  t.is(bearer.body.code, 'session_required')
  t.is((await request(app.url, '/api/billing/portal', { bearer: key })).status, 403)
  t.is((await request(app.url, '/api/payments/checkout', { json: { plan: 'pro' } })).status, 401)
  t.is((await request(app.url, '/api/billing/portal')).status, 401)
  const noCsrf = await request(app.url, '/api/payments/checkout', { json: { plan: 'pro' }, session: { cookie: u.session.cookie } })
  t.is(noCsrf.status, 403)
  t.is(noCsrf.body.code, 'csrf_failed')
  t.is((await app.sql`select 1 from billing_customers where account_id = ${u.accountId}`).length, 0)
  t.is(customersOf(), 0)
})

test('no provider configured: checkout and portal 503 naming STRIPE_SECRET_KEY, the webhook 503 naming STRIPE_WEBHOOK_SECRET', async (t) => {
  const bare = await app.another()
  const u = await signUp(bare.url)
  const co = await request(bare.url, '/api/payments/checkout', { json: { plan: 'pro' }, session: u.session })
  t.is(co.status, 503)
  t.regex(co.body.detail, /STRIPE_SECRET_KEY/)
  const portal = await request(bare.url, '/api/billing/portal', { session: u.session })
  t.is(portal.status, 503)
  t.regex(portal.body.detail, /STRIPE_SECRET_KEY/)
  const hook = await request(bare.url, '/api/payments/webhook', { body: '{}', headers: { 'stripe-signature': 't=1,v1=00' } })
  t.is(hook.status, 503)
  t.regex(hook.body.detail, /STRIPE_WEBHOOK_SECRET/)
  const noPrice = await app.another({ STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_API_BASE: standin.url })
  const r = await request(noPrice.url, '/api/payments/checkout', { json: { plan: 'pro' }, session: u.session })
  t.is(r.status, 503)
  t.regex(r.body.detail, /STRIPE_PRICE_PRO/)
  t.is((await bare.sql`select 1 from billing_customers where account_id = ${u.accountId}`).length, 0)
})

test('a plan change applied from the provider is in the audit log, its actor the billing sync, with the plans before and after', async (t) => {
  const u = await signUp(app.url)
  await subscribe(u, 'pro')
  await waitForPlan(u.accountId, 'pro')
  const rows = await app.sql<{ actor_type: string; action: string; summary: { before: { plan: string }; after: { plan: string } } }[]>`
    select actor_type, action, summary from audit_events where account_id = ${u.accountId} and action = 'plan.change'`
  t.is(rows.length, 1)
  t.like(rows[0], { actor_type: 'billing', summary: { before: { plan: 'free' }, after: { plan: 'pro' } } })
  const listed = await request(app.url, '/api/v1/audit', { session: u.session })
  t.is(listed.status, 200, listed.text)
  t.like(
    listed.body.events.find((e: { action: string }) => e.action === 'plan.change'),
    { actor: { type: 'billing', id: null } },
  )
})
