// Account recovery and removal (docs/decisions.md §19) on real PostgreSQL and Redis through a listening
// server, with mail to a local SMTP server: password reset (same answer for any address, a link used
// once, expiring, every session revoked, API keys kept), password change (other sessions revoked), and
// account deletion leaving no row of the account in any table of the schema.
import test from 'ava'
import { generate } from 'otplib'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { cookieFrom, request } from '../helpers/http.js'
import { eventually, sleep, startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from '../helpers/receivers.js'
import { settle } from '../helpers/storage.js'

let smtp: SmtpReceiver
let hook: HttpReceiver
test.before(async () => {
  ;[smtp, hook] = await Promise.all([startSmtpReceiver(), startHttpReceiver()])
})
const app = appSuite({ workers: true, env: () => ({ SMTP_URL: smtp.url, ALERT_EVAL_INTERVAL_SECONDS: '3600' }) })
test.serial.after.always(async () => {
  await smtp?.close()
  await hook?.close()
})

const NEW_PASSWORD = 'a brand new passphrase'

async function login(email: string, password: string) {
  const res = await request(app.url, '/api/v1/auth/login', { json: { email, password } })
  return {
    res,
    session: res.status === 200 ? { cookie: cookieFrom(res, 'service_session')!, csrf: res.body.csrf_token as string } : undefined,
  }
}
const me = (session: { cookie: string }) => request(app.url, '/api/v1/auth/me', { session })

/** Asks for a reset of the user's password and returns the token of the link mailed. */
async function resetToken(u: User): Promise<string> {
  const before = smtp.mails.filter((m) => m.to.includes(u.email)).length
  const res = await request(app.url, '/api/v1/auth/password-reset', { json: { email: u.email } })
  if (res.status !== 202) throw new Error(`reset: ${res.status} ${res.text}`)
  const mails = await smtp.waitFor(before + 1, (m) => m.to.includes(u.email))
  return /\/reset\?token=([A-Za-z0-9_-]+)/.exec(mails[before].text)![1]
}
const confirm = (token: string, password = NEW_PASSWORD) =>
  request(app.url, '/api/v1/auth/password-reset/confirm', { json: { token, password } })

// ------------------------------------------------------------------ reset

test('19 reset: 202 with the same body for a known and an unknown address; only the account gets a mail, with a link to /reset', async (t) => {
  const u = await signUp(app.url)
  const known = await request(app.url, '/api/v1/auth/password-reset', { json: { email: u.email.toUpperCase() } })
  const unknown = await request(app.url, '/api/v1/auth/password-reset', { json: { email: `nobody.${Date.now()}@example.com` } })
  t.is(known.status, 202)
  t.is(unknown.status, 202)
  t.deepEqual(known.body, unknown.body)
  t.deepEqual(known.body, { status: 'accepted' })
  const [mail] = await smtp.waitFor(1, (m) => m.to.includes(u.email))
  t.is(mail.subject, 'Reset your password')
  t.regex(mail.text, new RegExp(`${app.url.replace(/[.]/g, '\\.')}/reset\\?token=[A-Za-z0-9_-]{43}`))
  await sleep(300)
  t.false(smtp.mails.some((m) => m.to.some((to) => to.startsWith('nobody.'))))
  // Only the token's hash is stored.
  const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]
  const rows = await app.sql`select token_hash::text as h from password_resets where account_id = ${u.accountId}`
  t.false(rows.some((r) => r.h.includes(Buffer.from(token).toString('hex'))))
})

test('19 reset link: sets the password, revokes every session, keeps API keys; a second use is refused and changes nothing', async (t) => {
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  const second = await login(u.email, u.password)
  t.is((await me(u.session)).status, 200)
  const token = await resetToken(u)
  const res = await confirm(token)
  t.is(res.status, 200, res.text)
  t.deepEqual(res.body, { account: { email: u.email }, sessions_revoked: true })
  t.is((await me(u.session)).status, 401, 'the first session is revoked')
  t.is((await me(second.session!)).status, 401, 'the second session is revoked')
  t.is((await request(app.url, '/api/v1/auth/me', { bearer: key })).status, 200, 'API keys stay')
  t.is((await login(u.email, u.password)).res.status, 401, 'the old password no longer works')
  t.is((await login(u.email, NEW_PASSWORD)).res.status, 200)
  // Used twice: refused, and the password stays the one set by the first use.
  const again = await confirm(token, 'yet another passphrase')
  t.is(again.status, 400)
  t.is(again.body.code, 'reset_token_invalid')
  t.regex(again.body.detail, /unknown, expired or already used/)
  t.is((await login(u.email, 'yet another passphrase')).res.status, 401)
  t.is((await login(u.email, NEW_PASSWORD)).res.status, 200)
})

test('19 reset refusals: expired, unknown, a short password (which leaves the link usable), and a link made stale by a newer use', async (t) => {
  const u = await signUp(app.url)
  const token = await resetToken(u)
  const short = await confirm(token, 'short')
  t.is(short.status, 400)
  t.regex(short.body.detail, /password: must be at least 10 characters/)
  t.is((await me(u.session)).status, 200, 'nothing happened: the session lives')
  t.is((await confirm('not-a-token')).status, 400)
  await app.sql`update password_resets set expires_at = now() - interval '1 second' where account_id = ${u.accountId}`
  const expired = await confirm(token)
  t.is(expired.status, 400)
  t.is(expired.body.code, 'reset_token_invalid')
  t.is((await login(u.email, u.password)).res.status, 200, 'the password is unchanged')
  // Two links: using one uses up the other.
  const a = await resetToken(u)
  const b = await resetToken(u)
  t.is((await confirm(b)).status, 200)
  t.is((await confirm(a)).status, 400)
})

test('19 reset requests are throttled per address (429 with Retry-After); at most 5 a day; nothing more is mailed', async (t) => {
  const u = await signUp(app.url)
  const statuses: number[] = []
  for (let i = 0; i < 8; i++) statuses.push((await request(app.url, '/api/v1/auth/password-reset', { json: { email: u.email } })).status)
  // Five free attempts, which are also the day's cap: the sixth waits for the day to pass.
  t.deepEqual(statuses, [202, 202, 202, 202, 202, 429, 429, 429])
  const res = await request(app.url, '/api/v1/auth/password-reset', { json: { email: u.email } })
  t.is(res.status, 429)
  t.true(Number(res.headers.get('retry-after')) > 86_000, `Retry-After ${res.headers.get('retry-after')}`)
  await sleep(500)
  t.is(smtp.mails.filter((m) => m.to.includes(u.email)).length, 5)
})

// ------------------------------------------------------------------ change

test('19 password change: wrong current password is 403 and changes nothing; a change revokes the other sessions, not this one', async (t) => {
  const u = await signUp(app.url)
  const other = await login(u.email, u.password)
  const wrong = await request(app.url, '/api/v1/auth/password', {
    json: { current_password: 'not it at all', new_password: NEW_PASSWORD },
    session: u.session,
  })
  t.is(wrong.status, 403)
  t.is(wrong.body.code, 'wrong_password')
  const short = await request(app.url, '/api/v1/auth/password', {
    json: { current_password: u.password, new_password: 'short' },
    session: u.session,
  })
  t.is(short.status, 400)
  const noCsrf = await request(app.url, '/api/v1/auth/password', {
    json: { current_password: u.password, new_password: NEW_PASSWORD },
    session: { cookie: u.session.cookie },
  })
  t.is(noCsrf.status, 403)
  const { key } = await createKey(app.url, u)
  t.is(
    (await request(app.url, '/api/v1/auth/password', { json: { current_password: u.password, new_password: NEW_PASSWORD }, bearer: key }))
      .status,
    403,
    'a key cannot change the password',
  )
  t.is((await me(other.session!)).status, 200, 'nothing revoked by the refusals')
  t.is((await login(u.email, u.password)).res.status, 200)

  const res = await request(app.url, '/api/v1/auth/password', {
    json: { current_password: u.password, new_password: NEW_PASSWORD },
    session: u.session,
  })
  t.is(res.status, 204, res.text)
  t.is((await me(u.session)).status, 200, 'this session stays')
  t.is((await me(other.session!)).status, 401, 'the other session is revoked')
  t.is((await login(u.email, u.password)).res.status, 401)
  t.is((await login(u.email, NEW_PASSWORD)).res.status, 200)
})

// ------------------------------------------------------------------ delete

/** Every base table of the schema, with the columns this test can tie to an account. */
async function tables() {
  return app.sql<{ table: string; columns: string[] }[]>`
    select c.table_name as table, array_agg(c.column_name::text order by c.column_name) as columns
    from information_schema.columns c join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and t.table_type = 'BASE TABLE' group by c.table_name order by c.table_name`
}

// Tables that hold nothing of any account: the migrations, the free-tier counter, batch ids, sweep timings and the
// compaction's marks (a time each, sql/0049).
const GLOBAL = new Set(['schema_migrations', 'free_tier', 'applied_batches', 'anomaly_sweeps', 'compaction_marks'])

/** Rows tied to the account in each table, by every link this test knows; throws on a table it cannot judge. */
async function rowsOf(ids: { account: string; stats: string[]; alerts: string[]; deliveries: string[]; customer: string }) {
  const found: Record<string, number> = {}
  for (const { table, columns } of await tables()) {
    const where: string[] = []
    if (table === 'accounts') where.push(`id = '${ids.account}'`)
    if (columns.includes('account_id')) where.push(`account_id = '${ids.account}'`)
    if (columns.includes('stat_id') && ids.stats.length) where.push(`stat_id = any('{${ids.stats.join(',')}}'::uuid[])`)
    if (columns.includes('alert_id') && ids.alerts.length) where.push(`alert_id = any('{${ids.alerts.join(',')}}'::uuid[])`)
    if (columns.includes('delivery_id') && ids.deliveries.length) where.push(`delivery_id = any('{${ids.deliveries.join(',')}}'::text[])`)
    if (table === 'alert_deliveries' && ids.deliveries.length) where.push(`id = any('{${ids.deliveries.join(',')}}'::text[])`)
    if (columns.includes('customer_id')) where.push(`customer_id = '${ids.customer}'`)
    if (!where.length) {
      if (!GLOBAL.has(table))
        throw new Error(
          `table ${table} has no column this test can tie to an account (${columns.join(', ')}): teach the test (and check deleteAccount)`,
        )
      continue
    }
    const [{ n }] = await app.sql.unsafe(`select count(*)::int as n from "${table}" where ${where.join(' or ')}`)
    found[table] = n
  }
  return found
}

/** An account with a row in as many tables as the API can fill: stats, points, rollups, a share, alerts with deliveries and history, keys, sessions, an import, a reset link, two-factor recovery codes, an e-mail confirmation, a billing customer. */
async function populated() {
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  await login(u.email, u.password)
  await app.sql`update accounts set plan = 'pro' where id = ${u.accountId}`
  for (const [stat, body] of [
    ['cpu', { value: 42 }],
    ['signups', { count: 3, ikey: 'once' }],
  ] as const) {
    const kind = 'value' in body ? 'value' : 'count'
    const res = await request(app.url, `/api/v1/stats/${stat}/${kind}`, { json: body, bearer: key })
    if (res.status !== 200) throw new Error(`write: ${res.status} ${res.text}`)
  }
  await settle(app)
  await eventually(
    async () =>
      (await app.sql`select 1 from rollup_state rs join stats s on s.id = rs.stat_id where s.account_id = ${u.accountId}`).length === 2,
    'rollups folded',
  )
  t_ok(await request(app.url, '/api/v1/stats/cpu/share', { method: 'POST', bearer: key }), 201, 200)
  const csv = `stat,value,timestamp\nimported,5,${Math.floor(Date.now() / 1000) - 3600}\n`
  const imported = await request(app.url, '/api/v1/import/legacy', { body: csv, headers: { 'content-type': 'text/csv' }, bearer: key })
  t_ok(imported, 202, 200, 201)
  await eventually(
    async () =>
      (await request(app.url, `/api/v1/import/legacy/${imported.body.import.id}`, { bearer: key })).body.import.status === 'completed',
    'the import completed',
  )
  await eventually(
    async () =>
      (await app.sql`select 1 from rollup_state rs join stats s on s.id = rs.stat_id where s.account_id = ${u.accountId}`).length === 3 &&
      (await app.sql`select 1 from rollup_pending rp join stats s on s.id = rp.stat_id where s.account_id = ${u.accountId}`).length === 0,
    'the import folded',
  )
  const alert = await request(app.url, '/api/v1/alerts', {
    json: { stat_name: 'cpu', condition_type: 'above', threshold: 1, channel: 'webhook', channel_config: { webhook_url: hook.url } },
    bearer: key,
  })
  t_ok(alert, 201)
  t_ok(await request(app.url, `/api/v1/alerts/${alert.body.alert.id}/test`, { method: 'POST', bearer: key }), 202)
  await eventually(
    async () =>
      (
        await app.sql`select 1 from alert_delivery_attempts a join alert_deliveries d on d.id = a.delivery_id where d.alert_id = ${alert.body.alert.id}`
      ).length > 0,
    'the test delivered',
  )
  t_ok(
    await request(app.url, '/api/v1/alerts', {
      json: {
        stat_name: 'cpu',
        condition_type: 'above',
        threshold: 1,
        channel: 'email',
        channel_config: { email: `owner.${u.accountId.slice(0, 8)}@example.com` },
      },
      bearer: key,
    }),
    201,
  )
  await resetToken(u)
  const setup = await request(app.url, '/api/v1/auth/2fa/setup', { method: 'POST', session: u.session })
  const enabled = await request(app.url, '/api/v1/auth/2fa/enable', {
    json: { code: await generate({ secret: setup.body.secret }) },
    session: u.session,
  })
  t_ok(enabled, 200)
  const recoveryCodes: string[] = enabled.body.recovery_codes
  const customer = `cus_${u.accountId.slice(0, 8)}`
  await app.sql`insert into billing_customers (account_id, customer_id, subscription_status) values (${u.accountId}, ${customer}, 'canceled')`
  await app.sql`insert into billing_events (id, type, customer_id) values (${`evt_${customer}`}, 'customer.subscription.deleted', ${customer})`
  const stats = (await app.sql<{ id: string }[]>`select id from stats where account_id = ${u.accountId}`).map((r) => r.id)
  const alerts = (await app.sql<{ id: string }[]>`select id from alerts where account_id = ${u.accountId}`).map((r) => r.id)
  const deliveries = (await app.sql<{ id: string }[]>`select id from alert_deliveries where alert_id = any(${alerts}::uuid[])`).map(
    (r) => r.id,
  )
  return { u, key, recoveryCodes, ids: { account: u.accountId, stats, alerts, deliveries, customer } }
}

function t_ok(res: { status: number; text: string }, ...ok: number[]) {
  if (!ok.includes(res.status)) throw new Error(`unexpected ${res.status}: ${res.text}`)
}

test.serial(
  '19 account deletion: 204, and no row of the account is left in any table of the schema; another account is untouched; the free slot is not given back',
  async (t) => {
    const { u, key, ids, recoveryCodes } = await populated()
    const other = await populated()
    const before = await rowsOf(ids)
    // The data really was there, in the tables this feature is about.
    for (const table of [
      'accounts',
      'sessions',
      'api_keys',
      'stats',
      'points',
      'point_ikeys',
      'rollups_1m',
      'stat_shares',
      'alerts',
      'alert_deliveries',
      'alert_events',
      'alert_delivery_attempts',
      'email_confirmations',
      'imports',
      'password_resets',
      'recovery_codes',
      'billing_customers',
      'billing_events',
    ]) {
      t.true((before[table] ?? 0) > 0, `${table} held rows of the account before`)
    }
    const [{ claimed }] = await app.sql`select claimed from free_tier`
    const otherBefore = await rowsOf(other.ids)

    // Refusals first: wrong password, no password, a key instead of a session, no CSRF token. Nothing goes.
    const wrong = await request(app.url, '/api/v1/account', {
      method: 'DELETE',
      json: { password: 'not the password' },
      session: u.session,
    })
    t.is(wrong.status, 403)
    t.is(wrong.body.code, 'wrong_password')
    t.is((await request(app.url, '/api/v1/account', { method: 'DELETE', json: {}, session: u.session })).status, 400)
    t.is((await request(app.url, '/api/v1/account', { method: 'DELETE', json: { password: u.password }, bearer: key })).status, 403)
    t.is(
      (
        await request(app.url, '/api/v1/account', {
          method: 'DELETE',
          json: { password: u.password },
          session: { cookie: u.session.cookie },
        })
      ).status,
      403,
    )
    // Two-factor sign-in is on, so the password alone is not enough, nor a wrong code.
    const bare = await request(app.url, '/api/v1/account', { method: 'DELETE', json: { password: u.password }, session: u.session })
    t.is(bare.status, 403)
    t.is(bare.body.code, 'second_factor_required')
    t.regex(bare.body.detail, /^two-factor sign-in is on for this account: send a current code .*nothing was changed$/)
    const wrongCode = await request(app.url, '/api/v1/account', {
      method: 'DELETE',
      json: { password: u.password, code: 'aaaaa-aaaaa' },
      session: u.session,
    })
    t.is(wrongCode.status, 403)
    t.is(wrongCode.body.code, 'wrong_second_factor')
    t.like((await request(app.url, '/api/v1/account/deletion', { session: u.session })).body, { allowed: true, code_required: true })
    t.deepEqual(await rowsOf(ids), before)

    const res = await request(app.url, '/api/v1/account', {
      method: 'DELETE',
      json: { password: u.password, code: recoveryCodes[0] },
      session: u.session,
    })
    t.is(res.status, 204, res.text)
    t.regex(res.headers.get('set-cookie') ?? '', /service_session=;/)
    const after = await rowsOf(ids)
    t.deepEqual(
      Object.entries(after).filter(([, n]) => n > 0),
      [],
      'no table holds a row of the account',
    )
    t.is((await me(u.session)).status, 401)
    await sleep(1100) // other processes' key caches live at most a second
    t.is((await request(app.url, '/api/v1/stats', { bearer: key })).status, 401)
    t.is((await login(u.email, u.password)).res.status, 401)
    t.is((await app.sql`select claimed from free_tier`)[0].claimed, claimed, 'the free-tier slot is not given back')
    // Nor does Redis keep anything named after the account or its stats (rate bucket, day counters, ikeys).
    const redis = app.api.deps.redis
    const mentions = async () =>
      (await redis.keys(`${app.config.redisPrefix}:*`)).filter((k) => [ids.account, ...ids.stats].some((id) => k.includes(id)))
    await eventually(async () => (await mentions()).length === 0, 'the account forgotten in Redis', 5000).catch(() => {})
    t.deepEqual(await mentions(), [])
    t.true(
      (await redis.keys(`${app.config.redisPrefix}:*`)).some(
        (k) => other.ids.stats.some((id) => k.includes(id)) || k.includes(other.ids.account),
      ),
      "the other account's keys stay",
    )
    t.deepEqual(await rowsOf(other.ids), otherBefore, 'another account keeps every row')
    t.is((await request(app.url, '/api/v1/stats', { bearer: other.key })).status, 200)
    // The address may sign up again, as a new account.
    t.is((await request(app.url, '/api/v1/auth/signup', { json: { email: u.email, password: u.password } })).status, 201)
  },
)

test('19 account deletion with a live subscription: 409 before any other check, saying where to cancel; nothing is deleted', async (t) => {
  const u = await signUp(app.url)
  t.deepEqual((await request(app.url, '/api/v1/account/deletion', { session: u.session })).body, {
    allowed: true,
    reason: null,
    portal_url: null,
    code_required: false,
  })
  await app.sql`insert into billing_customers (account_id, customer_id, subscription_status) values (${u.accountId}, ${`cus_live_${u.accountId.slice(0, 8)}`}, 'active')`
  // The subscription is checked first (a wrong password is not the first thing to hear of),
  // in plain grammar, with the portal's address.
  for (const password of [u.password, 'not the password']) {
    const res = await request(app.url, '/api/v1/account', { method: 'DELETE', json: { password }, session: u.session })
    t.is(res.status, 409)
    t.is(res.body.code, 'subscription_active')
    t.is(
      res.body.detail,
      'the account has an active subscription: cancel it in the billing portal first (/api/billing/portal), so that nothing is charged after the account is gone; nothing was deleted',
    )
    t.is(res.body.portal_url, '/api/billing/portal')
  }
  t.deepEqual((await request(app.url, '/api/v1/account/deletion', { session: u.session })).body, {
    allowed: false,
    code_required: false,
    portal_url: '/api/billing/portal',
    reason:
      'the account has an active subscription: cancel it in the billing portal first (/api/billing/portal), so that nothing is charged after the account is gone; nothing was deleted',
  })
  await app.sql`update billing_customers set subscription_status = 'trialing' where account_id = ${u.accountId}`
  t.regex(
    (await request(app.url, '/api/v1/account', { method: 'DELETE', json: { password: u.password }, session: u.session })).body.detail,
    /^the account has a trial subscription: /,
  )
  t.is((await app.sql`select 1 from accounts where id = ${u.accountId}`).length, 1)
  t.is((await me(u.session)).status, 200)
})
