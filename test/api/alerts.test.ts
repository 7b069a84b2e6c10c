// Alert API (docs/decisions.md §I-2.4, §I-3.2; §8): create, validation,
// plan limit, SSRF refusals at create, list, delete, account isolation and the
// e-mail double opt-in against a local SMTP server. No delivery happens here
// (no workers); see test/workers/alert-delivery.test.ts for that.
import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from '../helpers/receivers.js'

const PUBLIC_URL = 'https://metrics.example.test'

let smtp: SmtpReceiver
test.before(async () => {
  smtp = await startSmtpReceiver()
})
const app = appSuite({ env: () => ({ SMTP_URL: smtp.url, PUBLIC_URL }) })
test.serial.after.always(() => smtp?.close())

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

async function user(base = app.url) {
  const u = await signUp(base)
  const { key } = await createKey(base, u)
  return { ...u, key }
}

function webhookBody(overrides: Record<string, unknown> = {}) {
  return {
    stat_name: 'cpu load',
    condition_type: 'above',
    threshold: 90,
    window_minutes: 5,
    channel: 'webhook',
    channel_config: { webhook_url: 'http://127.0.0.1:9/hook' },
    cooldown_minutes: 10,
    ...overrides,
  }
}

async function alertsOf(accountId: string) {
  return [
    ...(await app.sql<
      { id: string; state: string }[]
    >`select id, state from alerts where account_id = ${accountId} order by created_at, id`),
  ]
}

// ------------------------------------------------------------------ create

const CONDITIONS = ['above', 'below', 'pct_change', 'heartbeat', 'missing_data', 'sustained'] as const

for (const condition of CONDITIONS) {
  test(`2.4 create an alert with condition_type ${condition}: 201 with the alert fields and a signing secret shown once`, async (t) => {
    const u = await user()
    const body = webhookBody({
      stat_name: `stat ${condition}`,
      condition_type: condition,
      threshold: condition === 'pct_change' ? 25 : 1.5,
      window_minutes: 3,
      cooldown_minutes: 0,
    })
    const res = await request(app.url, '/api/v1/alerts', { json: body, bearer: u.key })
    t.is(res.status, 201, res.text)
    const { alert, signing_secret } = res.body
    t.regex(alert.id, UUID)
    t.like(alert, {
      stat_name: `stat ${condition}`,
      condition_type: condition,
      threshold: body.threshold,
      window_minutes: 3,
      channel: 'webhook',
      cooldown_minutes: 0,
      state: 'ok',
    })
    t.deepEqual(alert.channel_config, { webhook_url: 'http://127.0.0.1:9/hook' })
    t.regex(alert.created_at, ISO_UTC)
    t.true(Math.abs(Date.parse(alert.created_at) - Date.now()) < 60_000)
    t.is(typeof signing_secret, 'string')
    t.true(signing_secret.length >= 16)
    t.false('signing_secret' in alert)

    // Never shown again: not in the list, under any field.
    const list = await request(app.url, '/api/v1/alerts', { bearer: u.key })
    t.is(list.status, 200)
    t.is(list.body.alerts.length, 1)
    t.is(list.body.alerts[0].id, alert.id)
    t.false(list.text.includes(signing_secret))
    t.false('signing_secret' in list.body.alerts[0])
  })
}

test('2.4 create: defaults for window_minutes and cooldown_minutes; the stat need not exist; stat name is kept as given', async (t) => {
  const u = await user()
  const res = await request(app.url, '/api/v1/alerts', {
    json: {
      stat_name: 'not yet written',
      condition_type: 'below',
      threshold: -3,
      channel: 'webhook',
      channel_config: { webhook_url: 'http://127.0.0.1:9/x' },
    },
    bearer: u.key,
  })
  t.is(res.status, 201, res.text)
  t.like(res.body.alert, { stat_name: 'not yet written', threshold: -3, window_minutes: 5, cooldown_minutes: 0, state: 'ok' })
})

test('an alert on a stat with no points yet is created with a warning naming the closest existing stat', async (t) => {
  const u = await user()
  t.is((await request(app.url, '/api/v1/stats/checkout.latency/value', { json: { value: 120 }, bearer: u.key })).status, 200)
  t.is((await request(app.url, '/api/v1/stats/signups/count', { json: { count: 1 }, bearer: u.key })).status, 200)
  const typo = await request(app.url, '/api/v1/alerts', { json: webhookBody({ stat_name: 'checkout.latncy' }), bearer: u.key })
  t.is(typo.status, 201)
  t.deepEqual(typo.body.warnings, [
    'no stat named "checkout.latncy" exists yet; the alert will evaluate once points arrive (did you mean "checkout.latency"?)',
  ])
  const exact = await request(app.url, '/api/v1/alerts', { json: webhookBody({ stat_name: 'signups' }), bearer: u.key })
  t.is(exact.status, 201)
  t.false('warnings' in exact.body)
  // Another account's names are never suggested (the free plan allows two alerts per account).
  const other = await user()
  t.is((await request(app.url, '/api/v1/stats/queue.size/value', { json: { value: 3 }, bearer: other.key })).status, 200)
  const unrelated = await request(app.url, '/api/v1/alerts', { json: webhookBody({ stat_name: 'signup rate' }), bearer: other.key })
  t.deepEqual(unrelated.body.warnings, ['no stat named "signup rate" exists yet; the alert will evaluate once points arrive'])
  const elsewhere = await request(app.url, '/api/v1/alerts', { json: webhookBody({ stat_name: 'checkout.latncy' }), bearer: other.key })
  t.deepEqual(elsewhere.body.warnings, ['no stat named "checkout.latncy" exists yet; the alert will evaluate once points arrive'])
})

test('2.4 two alerts get different signing secrets', async (t) => {
  const u = await user()
  const a = await request(app.url, '/api/v1/alerts', { json: webhookBody(), bearer: u.key })
  const b = await request(app.url, '/api/v1/alerts', { json: webhookBody(), bearer: u.key })
  t.is(a.status, 201)
  t.is(b.status, 201)
  t.not(a.body.signing_secret, b.body.signing_secret)
  t.not(a.body.alert.id, b.body.alert.id)
})

// ------------------------------------------------------------------ validation

const INVALID: Array<[string, Record<string, unknown>, string]> = [
  ['unknown condition_type', { condition_type: 'sideways' }, 'body.condition_type'],
  ['missing condition_type', { condition_type: undefined }, 'body.condition_type'],
  ['non-number threshold', { threshold: '90' }, 'body.threshold'],
  ['missing threshold', { threshold: undefined }, 'body.threshold'],
  ['window_minutes 0', { window_minutes: 0 }, 'body.window_minutes'],
  ['fractional window_minutes', { window_minutes: 1.5 }, 'body.window_minutes'],
  ['negative cooldown', { cooldown_minutes: -1 }, 'body.cooldown_minutes'],
  ['unknown channel', { channel: 'sms' }, 'body.channel'],
  ['missing webhook_url for webhook', { channel_config: {} }, 'body.channel_config.webhook_url'],
  [
    "webhook_url with another channel's field",
    { channel_config: { webhook_url: 'http://127.0.0.1:9/hook', email: 'ops@example.com' } },
    'body.channel_config.email',
  ],
  [
    'webhook_url with a slack field',
    { channel_config: { webhook_url: 'http://127.0.0.1:9/hook', slack_webhook_url: 'http://127.0.0.1:9/s' } },
    'body.channel_config.slack_webhook_url',
  ],
  ['unknown channel_config field', { channel_config: { webhook_url: 'http://127.0.0.1:9/hook', token: 'x' } }, 'body.channel_config'],
  ['bad email', { channel: 'email', channel_config: { email: 'not-an-address' } }, 'body.channel_config.email'],
  ['missing email for email', { channel: 'email', channel_config: {} }, 'body.channel_config.email'],
  [
    'missing slack_webhook_url for slack',
    { channel: 'slack', channel_config: { webhook_url: 'http://127.0.0.1:9/hook' } },
    'body.channel_config',
  ],
  ['bad stat name', { stat_name: 'cpu/load' }, 'body.stat_name'],
  ['empty stat name', { stat_name: '' }, 'body.stat_name'],
  ['stat name over 128 characters', { stat_name: 's'.repeat(129) }, 'body.stat_name'],
]

test('2.4 validation: every bad field is a 400 problem naming the field, and nothing is stored', async (t) => {
  const u = await user()
  for (const [what, overrides, field] of INVALID) {
    const res = await request(app.url, '/api/v1/alerts', { json: webhookBody(overrides), bearer: u.key })
    t.is(res.status, 400, `${what}: ${res.text}`)
    t.regex(res.headers.get('content-type') ?? '', /^application\/problem\+json/, what)
    t.is(res.body.status, 400, what)
    t.is(typeof res.body.code, 'string', what)
    t.true(String(res.body.detail).startsWith(field), `${what}: detail ${JSON.stringify(res.body.detail)} should name ${field}`)
  }
  t.deepEqual(await alertsOf(u.accountId), [])
  // The same account can still create a valid alert afterwards.
  t.is((await request(app.url, '/api/v1/alerts', { json: webhookBody(), bearer: u.key })).status, 201)
})

test('2.4 validation: a body that is not JSON, or an array, is a 400', async (t) => {
  const u = await user()
  const text = await request(app.url, '/api/v1/alerts', {
    body: 'stat_name=x',
    headers: { 'content-type': 'application/json' },
    bearer: u.key,
  })
  t.is(text.status, 400)
  const arr = await request(app.url, '/api/v1/alerts', { json: [webhookBody()], bearer: u.key })
  t.is(arr.status, 400)
  t.deepEqual(await alertsOf(u.accountId), [])
})

test('create without credentials is a 401', async (t) => {
  const res = await request(app.url, '/api/v1/alerts', { json: webhookBody() })
  t.is(res.status, 401)
  t.is((await request(app.url, '/api/v1/alerts')).status, 401)
})

// ------------------------------------------------------------------ plan limit

test('plan limit: the free plan allows 2 alerts; the 3rd is 403 alert_limit and not stored', async (t) => {
  const u = await user()
  for (let i = 0; i < 2; i++)
    t.is((await request(app.url, '/api/v1/alerts', { json: webhookBody({ threshold: i }), bearer: u.key })).status, 201)
  const third = await request(app.url, '/api/v1/alerts', { json: webhookBody({ threshold: 3 }), bearer: u.key })
  t.is(third.status, 403, third.text)
  t.is(third.body.code, 'alert_limit')
  t.is((await alertsOf(u.accountId)).length, 2)
  // Deleting one frees a place.
  const [first] = await alertsOf(u.accountId)
  t.is((await request(app.url, `/api/v1/alerts/${first.id}`, { method: 'DELETE', bearer: u.key })).status, 204)
  t.is((await request(app.url, '/api/v1/alerts', { json: webhookBody({ threshold: 4 }), bearer: u.key })).status, 201)
  t.is((await alertsOf(u.accountId)).length, 2)
})

test('plan limit: concurrent creations never exceed the limit', async (t) => {
  const u = await user()
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) => request(app.url, '/api/v1/alerts', { json: webhookBody({ threshold: i }), bearer: u.key })),
  )
  t.is(results.filter((r) => r.status === 201).length, 2)
  t.is(results.filter((r) => r.status === 403).length, 4)
  t.is((await alertsOf(u.accountId)).length, 2)
})

// ------------------------------------------------------------------ SSRF

test('6.5 SSRF: private and internal webhook targets are refused at create with 400, and nothing is stored or contacted', async (t) => {
  const strict = await app.another({ WEBHOOK_ALLOW_PRIVATE: '0' })
  // A loopback receiver reached through a name: proves no request is made for a refused target.
  const receiver: HttpReceiver = await startHttpReceiver()
  t.teardown(() => receiver.close())
  const u = await user(strict.url)
  const targets = [
    'http://169.254.169.254/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/hook',
    'http://192.168.1.10/hook',
    'http://172.16.0.1/hook',
    'http://100.64.0.1/hook',
    'http://127.0.0.1/hook',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://0.0.0.0/',
    'http://2130706433/', // 127.0.0.1 as one number
    'http://localhost:1/', // a name that resolves to 127.0.0.1
    `http://localhost:${receiver.port}/hook`,
    'ftp://example.com/hook',
    'file:///etc/passwd',
    'http://user:pass@example.com/hook',
    'not a url',
  ]
  for (const url of targets) {
    const res = await request(strict.url, '/api/v1/alerts', { json: webhookBody({ channel_config: { webhook_url: url } }), bearer: u.key })
    t.is(res.status, 400, `${url}: ${res.text}`)
    t.is(typeof res.body.detail, 'string')
  }
  const slack = await request(strict.url, '/api/v1/alerts', {
    json: webhookBody({ channel: 'slack', channel_config: { slack_webhook_url: 'http://10.1.2.3/services/x' } }),
    bearer: u.key,
  })
  t.is(slack.status, 400, slack.text)
  t.deepEqual(await alertsOf(u.accountId), [])
  t.is(receiver.requests.length, 0)
})

test('6.5 SSRF: the refusal names the reason (private address, scheme)', async (t) => {
  const strict = await app.another({ WEBHOOK_ALLOW_PRIVATE: '0' })
  const u = await user(strict.url)
  const meta = await request(strict.url, '/api/v1/alerts', {
    json: webhookBody({ channel_config: { webhook_url: 'http://169.254.169.254/' } }),
    bearer: u.key,
  })
  t.is(meta.status, 400)
  t.is(meta.body.code, 'webhook_refused')
  t.regex(meta.body.detail, /a linkLocal address, not a public one; .*WEBHOOK_ALLOW_PRIVATE=1/)
  const ftp = await request(strict.url, '/api/v1/alerts', {
    json: webhookBody({ channel_config: { webhook_url: 'ftp://example.com/x' } }),
    bearer: u.key,
  })
  t.is(ftp.status, 400)
  t.regex(ftp.body.detail, /scheme/)
})

test('6.5 with WEBHOOK_ALLOW_PRIVATE=1 a loopback target is accepted, but other schemes are still refused', async (t) => {
  const u = await user()
  t.is(
    (
      await request(app.url, '/api/v1/alerts', {
        json: webhookBody({ channel_config: { webhook_url: 'http://127.0.0.1:9/hook' } }),
        bearer: u.key,
      })
    ).status,
    201,
  )
  const ftp = await request(app.url, '/api/v1/alerts', {
    json: webhookBody({ channel_config: { webhook_url: 'ftp://127.0.0.1/hook' } }),
    bearer: u.key,
  })
  t.is(ftp.status, 400)
  t.is((await alertsOf(u.accountId)).length, 1)
})

// ------------------------------------------------------------------ list and delete

test("list: GET returns the account's alerts with their fields", async (t) => {
  const u = await user()
  const a = await request(app.url, '/api/v1/alerts', { json: webhookBody({ stat_name: 'first' }), bearer: u.key })
  const b = await request(app.url, '/api/v1/alerts', {
    json: webhookBody({
      stat_name: 'second',
      condition_type: 'heartbeat',
      channel: 'slack',
      channel_config: { slack_webhook_url: 'http://127.0.0.1:9/slack' },
    }),
    bearer: u.key,
  })
  const list = await request(app.url, '/api/v1/alerts', { bearer: u.key })
  t.is(list.status, 200)
  t.deepEqual(
    list.body.alerts.map((x: { id: string }) => x.id),
    [a.body.alert.id, b.body.alert.id],
  )
  t.deepEqual(list.body.alerts[0], a.body.alert)
  t.like(list.body.alerts[1], {
    stat_name: 'second',
    condition_type: 'heartbeat',
    channel: 'slack',
    state: 'ok',
    channel_config: { slack_webhook_url: 'http://127.0.0.1:9/slack' },
  })
  // Session authentication works too.
  const viaSession = await request(app.url, '/api/v1/alerts', { session: u.session })
  t.is(viaSession.status, 200)
  t.is(viaSession.body.alerts.length, 2)
})

test('list: an account without alerts gets an empty list', async (t) => {
  const u = await user()
  const list = await request(app.url, '/api/v1/alerts', { bearer: u.key })
  t.is(list.status, 200)
  t.deepEqual(list.body, { alerts: [] })
})

test('3.2 delete: 204, then the alert is gone (a second delete is 404)', async (t) => {
  const u = await user()
  const created = await request(app.url, '/api/v1/alerts', { json: webhookBody(), bearer: u.key })
  const id = created.body.alert.id
  const del = await request(app.url, `/api/v1/alerts/${id}`, { method: 'DELETE', bearer: u.key })
  t.is(del.status, 204)
  t.is(del.text, '')
  t.deepEqual((await request(app.url, '/api/v1/alerts', { bearer: u.key })).body.alerts, [])
  t.deepEqual(await alertsOf(u.accountId), [])
  const again = await request(app.url, `/api/v1/alerts/${id}`, { method: 'DELETE', bearer: u.key })
  t.is(again.status, 404)
  t.is((await request(app.url, '/api/v1/alerts/00000000-0000-4000-8000-000000000000', { method: 'DELETE', bearer: u.key })).status, 404)
  t.is((await request(app.url, '/api/v1/alerts/not-a-uuid', { method: 'DELETE', bearer: u.key })).status, 400)
})

test('delete with a session needs the CSRF header', async (t) => {
  const u = await user()
  const id = (await request(app.url, '/api/v1/alerts', { json: webhookBody(), bearer: u.key })).body.alert.id
  t.is((await request(app.url, `/api/v1/alerts/${id}`, { method: 'DELETE', session: { cookie: u.session.cookie } })).status, 403)
  t.is((await alertsOf(u.accountId)).length, 1)
  t.is((await request(app.url, `/api/v1/alerts/${id}`, { method: 'DELETE', session: u.session })).status, 204)
})

test('account isolation: another account cannot list or delete an alert', async (t) => {
  const owner = await user()
  const intruder = await user()
  const id = (await request(app.url, '/api/v1/alerts', { json: webhookBody(), bearer: owner.key })).body.alert.id
  const list = await request(app.url, '/api/v1/alerts', { bearer: intruder.key })
  t.is(list.status, 200)
  t.deepEqual(list.body.alerts, [])
  const del = await request(app.url, `/api/v1/alerts/${id}`, { method: 'DELETE', bearer: intruder.key })
  t.is(del.status, 404)
  t.is((await alertsOf(owner.accountId)).length, 1)
  t.is((await request(app.url, '/api/v1/alerts', { bearer: owner.key })).body.alerts[0].id, id)
})

// ------------------------------------------------------------------ e-mail opt-in

test('6.1 e-mail channel without SMTP configured: 400 and nothing stored', async (t) => {
  const noSmtp = await app.another()
  const u = await user(noSmtp.url)
  const res = await request(noSmtp.url, '/api/v1/alerts', {
    json: webhookBody({ channel: 'email', channel_config: { email: 'ops@example.com' } }),
    bearer: u.key,
  })
  t.is(res.status, 400, res.text)
  t.is(res.body.code, 'email_unavailable')
  t.deepEqual(await alertsOf(u.accountId), [])
})

test('6.1 e-mail: when the confirmation mail cannot be sent, 503 and nothing stored', async (t) => {
  const down = await app.another({ SMTP_URL: 'smtp://127.0.0.1:1' }) // nothing listens on port 1
  const u = await user(down.url)
  const res = await request(down.url, '/api/v1/alerts', {
    json: webhookBody({ channel: 'email', channel_config: { email: 'down@example.com' } }),
    bearer: u.key,
  })
  t.is(res.status, 503, res.text)
  t.deepEqual(await alertsOf(u.accountId), [])
})

function confirmationLink(text: string): URL {
  const m = /(https?:\/\/\S+\/api\/v1\/email\/confirm\?token=\S+)/.exec(text)
  if (!m) throw new Error(`no confirmation link in:\n${text}`)
  return new URL(m[1])
}

test('6.1 e-mail double opt-in: created pending_confirmation, a confirmation mail with a link arrives, the link confirms and arms the alert', async (t) => {
  const u = await user()
  const address = `ops.${u.accountId.slice(0, 8)}@example.com`
  const res = await request(app.url, '/api/v1/alerts', {
    json: webhookBody({ stat_name: 'disk free', channel: 'email', channel_config: { email: address } }),
    bearer: u.key,
  })
  t.is(res.status, 201, res.text)
  t.like(res.body.alert, { state: 'pending_confirmation', channel: 'email', channel_config: { email: address } })
  const id = res.body.alert.id

  const [mail] = await smtp.waitFor(1, (m) => m.to.includes(address))
  t.regex(mail.subject, /confirm/i)
  t.true(mail.text.includes('disk free'))
  const link = confirmationLink(mail.text)
  t.is(link.origin, PUBLIC_URL) // the link is built on PUBLIC_URL
  t.true((link.searchParams.get('token') ?? '').length >= 16)
  // Nothing else was mailed to the address.
  t.is(smtp.mails.filter((m) => m.to.includes(address)).length, 1)

  // Follow the link on this (loopback) deployment.
  const confirm = await request(app.url, link.pathname + link.search)
  t.is(confirm.status, 200, confirm.text)
  const list = await request(app.url, '/api/v1/alerts', { bearer: u.key })
  t.is(list.body.alerts.find((a: { id: string }) => a.id === id).state, 'ok')

  // Clicking again is harmless.
  t.is((await request(app.url, link.pathname + link.search)).status, 200)

  // A second alert to the confirmed address is armed at once, with no new confirmation mail.
  const second = await request(app.url, '/api/v1/alerts', {
    json: webhookBody({ channel: 'email', channel_config: { email: address.toUpperCase() } }),
    bearer: u.key,
  })
  t.is(second.status, 201, second.text)
  t.is(second.body.alert.state, 'ok')
  await new Promise((r) => setTimeout(r, 300))
  t.is(smtp.mails.filter((m) => m.to.some((to) => to.toLowerCase() === address)).length, 1)
})

test('6.1 e-mail opt-in without PUBLIC_URL: the link points at the deployment itself, never at a caller-sent Origin header', async (t) => {
  const bare = await app.another({ SMTP_URL: smtp.url })
  const u = await user(bare.url)
  const address = `origin.${u.accountId.slice(0, 8)}@example.com`
  const res = await request(bare.url, '/api/v1/alerts', {
    json: webhookBody({ channel: 'email', channel_config: { email: address } }),
    bearer: u.key,
    headers: { origin: 'https://attacker.example' },
  })
  t.is(res.status, 201, res.text)
  const [mail] = await smtp.waitFor(1, (m) => m.to.includes(address))
  const link = confirmationLink(mail.text)
  t.is(link.origin, new URL(bare.url).origin)
  t.is((await request(bare.url, link.pathname + link.search)).status, 200)
  t.deepEqual(
    (await alertsOf(u.accountId)).map((a) => a.state),
    ['ok'],
  )
})

test('6.1 e-mail opt-in: a wrong or missing token is 404/400 and confirms nothing', async (t) => {
  const u = await user()
  const address = `wrong.${u.accountId.slice(0, 8)}@example.com`
  const res = await request(app.url, '/api/v1/alerts', {
    json: webhookBody({ channel: 'email', channel_config: { email: address } }),
    bearer: u.key,
  })
  t.is(res.status, 201)
  const [mail] = await smtp.waitFor(1, (m) => m.to.includes(address))
  const token = confirmationLink(mail.text).searchParams.get('token')!
  const wrong = await request(
    app.url,
    `/api/v1/email/confirm?token=${encodeURIComponent(token.slice(0, -2) + (token.endsWith('AA') ? 'BB' : 'AA'))}`,
  )
  t.is(wrong.status, 404)
  t.is((await request(app.url, '/api/v1/email/confirm?token=nope')).status, 404)
  t.is((await request(app.url, '/api/v1/email/confirm')).status, 400)
  t.deepEqual(
    (await alertsOf(u.accountId)).map((a) => a.state),
    ['pending_confirmation'],
  )
})

test("6.1 e-mail opt-in is per account: another account's confirmation of the same address does not arm this one", async (t) => {
  const a = await user()
  const b = await user()
  const address = `shared.${a.accountId.slice(0, 8)}@example.com`
  t.is(
    (
      await request(app.url, '/api/v1/alerts', {
        json: webhookBody({ channel: 'email', channel_config: { email: address } }),
        bearer: a.key,
      })
    ).status,
    201,
  )
  t.is(
    (
      await request(app.url, '/api/v1/alerts', {
        json: webhookBody({ channel: 'email', channel_config: { email: address } }),
        bearer: b.key,
      })
    ).status,
    201,
  )
  const mails = await smtp.waitFor(2, (m) => m.to.includes(address))
  const links = mails.map((m) => confirmationLink(m.text))
  t.not(links[0].search, links[1].search)
  // Confirm only one of the two mails; exactly one account's alert is armed.
  t.is((await request(app.url, links[0].pathname + links[0].search)).status, 200)
  const states = [...(await alertsOf(a.accountId)), ...(await alertsOf(b.accountId))].map((x) => x.state).sort()
  t.deepEqual(states, ['ok', 'pending_confirmation'])
})
