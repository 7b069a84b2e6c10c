// Alert management (docs/decisions.md §18) on real PostgreSQL and Redis through a listening server:
// PATCH and its refusals, mutes across a fire and a resolve, on_no_data, test deliveries through real
// delivery workers to local receivers (webhook signature checked, Slack, e-mail), and the events list.
// Evaluation passes are run by the test at chosen instants (the schedule is set an hour apart, so it
// stays out of the way); deliveries go through the real deliver-alert worker. A pass evaluates every alert,
// so the tests that run passes (some at instants minutes ahead) run one at a time.
import test from 'ava'
import { createHmac } from 'node:crypto'
import { evaluateAlerts } from '../../shared/alerts/evaluate.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { eventually, startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from '../helpers/receivers.js'
import { settle } from '../helpers/storage.js'

let smtp: SmtpReceiver
let receiver: HttpReceiver
test.before(async () => {
  smtp = await startSmtpReceiver()
  receiver = await startHttpReceiver()
})
const app = appSuite({ workers: true, env: () => ({ SMTP_URL: smtp.url, ALERT_EVAL_INTERVAL_SECONDS: '3600' }) })
test.serial.after.always(async () => {
  await smtp?.close()
  await receiver?.close()
})

let seq = 0
async function user() {
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  // Room for several alerts per test.
  await app.sql`update accounts set plan = 'pro' where id = ${u.accountId}`
  return { ...u, key }
}

async function createAlert(key: string, body: Record<string, unknown> = {}) {
  const res = await request(app.url, '/api/v1/alerts', {
    json: {
      stat_name: `gauge ${++seq}`,
      condition_type: 'above',
      threshold: 90,
      window_minutes: 5,
      channel: 'webhook',
      channel_config: { webhook_url: receiver.url },
      ...body,
    },
    bearer: key,
  })
  if (res.status !== 201) throw new Error(`alert creation failed: ${res.status} ${res.text}`)
  return { ...res.body.alert, secret: res.body.signing_secret as string }
}

/** Writes a gauge reading through the API and waits until it is stored and folded (its arrival recorded). */
async function gauge(key: string, stat: string, value: number): Promise<number> {
  const t = Math.floor(Date.now() / 1000)
  const res = await request(app.url, `/api/v1/stats/${encodeURIComponent(stat)}/value`, { json: { value, t }, bearer: key })
  if (res.status !== 200) throw new Error(`write failed: ${res.status} ${res.text}`)
  await settle(app)
  await eventually(async () => {
    const [row] = await app.sql`select (select count(*) from rollup_pending rp where rp.stat_id = s.id)::int as pending, rs.refreshed_at
      from stats s left join rollup_state rs on rs.stat_id = s.id where s.name = ${stat}`
    return row && row.pending === 0 && row.refreshed_at
  }, `the reading of ${stat} folded`)
  return t
}

/** One evaluation pass at `at` (retried while a scheduled pass holds the lock). */
async function evaluate(at: Date) {
  await eventually(async () => !(await evaluateAlerts(app.sql, at)).skipped, 'an evaluation pass')
}

const deliveries = async (alertId: string) => [
  ...(await app.sql<
    { id: string; event: string; payload: any }[]
  >`select id, event, payload from alert_deliveries where alert_id = ${alertId} order by created_at, event desc`),
]

async function events(u: { key: string }, alertId: string) {
  const res = await request(app.url, `/api/v1/alerts/${alertId}/events`, { bearer: u.key })
  if (res.status !== 200) throw new Error(`events: ${res.status} ${res.text}`)
  return res.body.events as Array<{
    at: string
    event: string
    observed_value: number | null
    detail: string | null
    delivery_status: string | null
    deliveries: any[]
  }>
}

const patch = (u: { key: string }, id: string, json: unknown) =>
  request(app.url, `/api/v1/alerts/${id}`, { method: 'PATCH', json, bearer: u.key })

function verifySignature(secret: string, header: unknown, body: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(header ?? ''))
  return !!m && createHmac('sha256', secret).update(`${m[1]}.${body}`).digest('hex') === m[2]
}

// ------------------------------------------------------------------ PATCH

test('18 PATCH changes threshold, window, cooldown, target, mute and on_no_data; the record shows muted_until and on_no_data', async (t) => {
  const u = await user()
  const a = await createAlert(u.key)
  t.is(a.muted_until, null)
  t.is(a.on_no_data, 'keep')
  const until = new Date(Date.now() + 3600_000).toISOString()
  const other = await startHttpReceiver()
  t.teardown(() => other.close())
  const res = await patch(u, a.id, {
    threshold: 75.5,
    window_minutes: 10,
    cooldown_minutes: 3,
    channel_config: { webhook_url: other.url },
    muted_until: until,
    on_no_data: 'resolve',
  })
  t.is(res.status, 200, res.text)
  t.like(res.body.alert, {
    id: a.id,
    threshold: 75.5,
    window_minutes: 10,
    cooldown_minutes: 3,
    channel_config: { webhook_url: other.url },
    muted_until: until,
    on_no_data: 'resolve',
    state: 'ok',
  })
  const list = await request(app.url, '/api/v1/alerts', { bearer: u.key })
  t.like(list.body.alerts[0], { threshold: 75.5, muted_until: until, on_no_data: 'resolve' })
  // Unmute with null; a session with its CSRF token may PATCH too.
  const unmuted = await request(app.url, `/api/v1/alerts/${a.id}`, { method: 'PATCH', json: { muted_until: null }, session: u.session })
  t.is(unmuted.status, 200, unmuted.text)
  t.is(unmuted.body.alert.muted_until, null)
  const history = await events(u, a.id)
  // The change itself is in the history too, with what went from what to what (a URL by name only).
  t.deepEqual(
    history.map((e) => [e.event, e.detail]),
    [
      ['muted', 'mute lifted'],
      ['muted', `muted until ${until}`],
      ['changed', 'threshold 90 → 75.5; window 5 → 10 min; cooldown 0 → 3 min; when the stat goes quiet keep → resolve; URL changed'],
    ],
  )
  // A PATCH that changes nothing but the threshold says only that; one that changes nothing leaves no line.
  t.is((await patch(u, a.id, { threshold: 80 })).status, 200)
  t.is((await patch(u, a.id, { threshold: 80 })).status, 200)
  const again = await events(u, a.id)
  t.is(again.length, history.length + 1)
  t.like(again[0], { event: 'changed', detail: 'threshold 75.5 → 80', observed_value: null, delivery_status: null })
})

test('18 PATCH refusals: status, message, and nothing stored', async (t) => {
  const u = await user()
  const a = await createAlert(u.key)
  const hb = await createAlert(u.key, { condition_type: 'heartbeat' })
  const before = await app.sql`select * from alerts where account_id = ${u.accountId} order by id`
  const cases: Array<[string, unknown, number, RegExp, string?]> = [
    ['empty body', {}, 400, /nothing to change/],
    ['unknown field', { stat_name: 'other' }, 400, /stat_name|unrecognized/i],
    ['not a date', { muted_until: 'tomorrow' }, 400, /muted_until: must be an ISO 8601 date/],
    ['bad on_no_data', { on_no_data: 'maybe' }, 400, /on_no_data/],
    ['window out of range', { window_minutes: 0 }, 400, /window_minutes/],
    ['threshold not a number', { threshold: '5' }, 400, /threshold/],
    ["another channel's field", { channel_config: { email: 'a@example.com' } }, 400, /channel_config.email: not used by channel webhook/],
    ['no target', { channel_config: {} }, 400, /channel_config.webhook_url: required for channel webhook/],
    ['not http', { channel_config: { webhook_url: 'ftp://example.com/x' } }, 400, /channel_config/],
    ['on_no_data on heartbeat', { on_no_data: 'resolve' }, 400, /on_no_data: applies to threshold conditions only/, hb.id],
  ]
  for (const [what, body, status, detail, id] of cases) {
    const res = await patch(u, id ?? a.id, body)
    t.is(res.status, status, `${what}: ${res.text}`)
    t.regex(res.headers.get('content-type') ?? '', /^application\/problem\+json/, what)
    t.regex(res.body.detail, detail, what)
  }
  // Another account's alert, an unknown one and a malformed id.
  const stranger = await user()
  t.is((await patch(stranger, a.id, { threshold: 1 })).status, 404)
  t.is((await patch(u, '00000000-0000-4000-8000-000000000000', { threshold: 1 })).status, 404)
  t.is((await patch(u, 'nope', { threshold: 1 })).status, 400)
  // A session without its CSRF token.
  t.is(
    (await request(app.url, `/api/v1/alerts/${a.id}`, { method: 'PATCH', json: { threshold: 1 }, session: { cookie: u.session.cookie } }))
      .status,
    403,
  )
  t.deepEqual(await app.sql`select * from alerts where account_id = ${u.accountId} order by id`, before)
  t.is((await events(u, a.id)).length, 0)
})

test('18 PATCH of an e-mail address: a new address goes back to pending_confirmation and gets a confirmation mail; its link arms the alert', async (t) => {
  const u = await user()
  const first = `first.${seq}@example.com`
  const created = await createAlert(u.key, { channel: 'email', channel_config: { email: first } })
  t.is(created.state, 'pending_confirmation')
  const link = (to: string) => /(http\S+\/api\/v1\/email\/confirm\?token=\S+)/.exec(smtp.mails.find((m) => m.to.includes(to))!.text)![1]
  await smtp.waitFor(1, (m) => m.to.includes(first))
  t.is((await fetch(link(first))).status, 200)
  t.is((await request(app.url, '/api/v1/alerts', { bearer: u.key })).body.alerts[0].state, 'ok')
  const second = `second.${seq}@example.com`
  const res = await patch(u, created.id, { channel_config: { email: second } })
  t.is(res.status, 200, res.text)
  t.is(res.body.alert.state, 'pending_confirmation')
  await smtp.waitFor(1, (m) => m.to.includes(second))
  t.is((await fetch(link(second))).status, 200)
  t.is((await request(app.url, '/api/v1/alerts', { bearer: u.key })).body.alerts[0].state, 'ok')
  // Back to the first, confirmed address: armed at once, no new mail.
  const back = await patch(u, created.id, { channel_config: { email: first } })
  t.is(back.body.alert.state, 'ok')
  t.is(smtp.mails.filter((m) => m.to.includes(first)).length, 1)
})

// ------------------------------------------------------------------ mute

test.serial('18 mute across a fire and a resolve: nothing is delivered, both show in the history as withheld', async (t) => {
  const u = await user()
  const a = await createAlert(u.key)
  await patch(u, a.id, { muted_until: new Date(Date.now() + 3600_000).toISOString() })
  await gauge(u.key, a.stat_name, 95)
  const now = Date.now()
  await evaluate(new Date(now + 2000))
  t.is((await app.sql`select state from alerts where id = ${a.id}`)[0].state, 'firing', 'evaluation and state go on while muted')
  await gauge(u.key, a.stat_name, 10) // the last minute now averages 52.5
  await evaluate(new Date(Date.now() + 2000))
  t.is((await app.sql`select state from alerts where id = ${a.id}`)[0].state, 'ok')
  t.deepEqual(await deliveries(a.id), [])
  const history = await events(u, a.id)
  t.deepEqual(
    history.map((e) => e.event),
    ['resolved', 'muted', 'muted'],
  )
  t.regex(history[1].detail!, /fire withheld \(muted until /)
  t.is(history[1].observed_value, 95)
  t.is(history[0].detail, 'not delivered: its fire was withheld by a mute')
  t.true(history.every((e) => e.deliveries.length === 0 && e.delivery_status === null))
})

test.serial(
  '18 a breach still in force when the mute is lifted is delivered at the next evaluation (signed), and a later resolve too',
  async (t) => {
    const u = await user()
    const a = await createAlert(u.key)
    await patch(u, a.id, { muted_until: new Date(Date.now() + 3600_000).toISOString() })
    await gauge(u.key, a.stat_name, 95)
    await evaluate(new Date(Date.now() + 1000))
    t.deepEqual(await deliveries(a.id), [])
    await patch(u, a.id, { muted_until: null })
    await evaluate(new Date(Date.now() + 2000))
    const [fired] = await deliveries(a.id)
    t.is(fired.event, 'fired')
    t.like(fired.payload, { event: 'fired', status: 'firing', observed_value: 95 })
    const history = await events(u, a.id)
    t.is(history[0].event, 'fired')
    t.is(history[0].detail, 'the breach outlasted the mute: delivered when it ended')
    // Nothing more while the breach lasts; the resolve goes out unmuted.
    await evaluate(new Date(Date.now() + 3000))
    t.is((await deliveries(a.id)).length, 1)
    await gauge(u.key, a.stat_name, 10)
    await evaluate(new Date(Date.now() + 4000))
    t.deepEqual(
      (await deliveries(a.id)).map((d) => d.event),
      ['fired', 'resolved'],
    )
  },
)

test.serial(
  '18 a resolve withheld by a mute (its fire was delivered) is delivered with the same incident when the mute is lifted',
  async (t) => {
    const u = await user()
    const a = await createAlert(u.key)
    await gauge(u.key, a.stat_name, 95)
    await evaluate(new Date(Date.now() + 1000))
    t.deepEqual(
      (await deliveries(a.id)).map((d) => d.event),
      ['fired'],
    )
    await patch(u, a.id, { muted_until: new Date(Date.now() + 3600_000).toISOString() })
    await gauge(u.key, a.stat_name, 10)
    await evaluate(new Date(Date.now() + 2000))
    t.deepEqual(
      (await deliveries(a.id)).map((d) => d.event),
      ['fired'],
      'withheld while muted',
    )
    t.is((await events(u, a.id))[0].event, 'muted')
    await patch(u, a.id, { muted_until: null })
    await evaluate(new Date(Date.now() + 3000))
    const d = await deliveries(a.id)
    t.deepEqual(
      d.map((x) => x.event),
      ['fired', 'resolved'],
    )
    t.is(d[1].payload.incident_key, d[0].payload.incident_key)
    t.is((await events(u, a.id))[0].detail, 'withheld by a mute, delivered when it ended')
    await evaluate(new Date(Date.now() + 4000))
    t.is((await deliveries(a.id)).length, 2, 'once')
  },
)

test.serial('18 a mute that runs out by itself: the breach is delivered at the first evaluation after muted_until', async (t) => {
  const u = await user()
  const a = await createAlert(u.key)
  const until = Date.now() + 5000
  await patch(u, a.id, { muted_until: new Date(until).toISOString() })
  await gauge(u.key, a.stat_name, 95)
  await evaluate(new Date(Math.min(Date.now() + 1000, until - 500)))
  t.deepEqual(await deliveries(a.id), [])
  await evaluate(new Date(until + 1000))
  t.deepEqual(
    (await deliveries(a.id)).map((d) => d.event),
    ['fired'],
  )
})

// ------------------------------------------------------------------ on_no_data

test.serial(
  '18 on_no_data resolve: a gauge alert fired by one reading resolves once the stat is quiet for window_minutes; keep stays firing',
  async (t) => {
    const u = await user()
    const stat = `quiet ${++seq}`
    const resolving = await createAlert(u.key, { stat_name: stat, on_no_data: 'resolve', window_minutes: 5 })
    const keeping = await createAlert(u.key, { stat_name: stat })
    // Without window_minutes the silence is 60 minutes (docs/decisions.md §18).
    const hourly = await createAlert(u.key, { stat_name: stat, on_no_data: 'resolve', window_minutes: undefined })
    t.is(hourly.window_minutes, 5)
    t.is(hourly.no_data_minutes, 60)
    t.is(resolving.no_data_minutes, 5)
    await gauge(u.key, stat, 95)
    const t0 = Date.now()
    await evaluate(new Date(t0 + 1000))
    t.deepEqual(
      (await deliveries(resolving.id)).map((d) => d.event),
      ['fired'],
    )
    // Past the last minute, no reading: the value cannot tell, the alert stays as it is...
    await evaluate(new Date(t0 + 120_000))
    t.is((await app.sql`select state from alerts where id = ${resolving.id}`)[0].state, 'firing')
    // ...until 5 minutes of silence (by arrival) have passed.
    await evaluate(new Date(t0 + 5 * 60_000 + 5000))
    const d = await deliveries(resolving.id)
    t.deepEqual(
      d.map((x) => x.event),
      ['fired', 'resolved'],
    )
    t.is(d[1].payload.incident_key, d[0].payload.incident_key)
    t.regex(d[1].payload.message, /resolved, no data for more than 5 min$/)
    t.is((await app.sql`select state from alerts where id = ${keeping.id}`)[0].state, 'firing')
    t.deepEqual(
      (await deliveries(keeping.id)).map((x) => x.event),
      ['fired'],
    )
    t.deepEqual(
      (await events(u, resolving.id)).map((e) => e.event),
      ['resolved', 'fired'],
    )
    t.is((await app.sql`select state from alerts where id = ${hourly.id}`)[0].state, 'firing', 'not yet an hour of silence')
    await evaluate(new Date(t0 + 60 * 60_000 + 5000))
    const h = await deliveries(hourly.id)
    t.deepEqual(
      h.map((x) => x.event),
      ['fired', 'resolved'],
    )
    t.regex(h[1].payload.message, /resolved, no data for more than 1 h$/)
    // A window given later by a change is the silence from then on.
    t.is((await patch(u, hourly.id, { window_minutes: 7 })).body.alert.no_data_minutes, 7)
  },
)

test.serial(
  '18 on_no_data alert: silence for window_minutes fires like missing_data; a reading within the threshold resolves it',
  async (t) => {
    const u = await user()
    const stat = `silent ${++seq}`
    const a = await createAlert(u.key, { stat_name: stat, on_no_data: 'alert', window_minutes: 2 })
    await gauge(u.key, stat, 10)
    const t0 = Date.now()
    await evaluate(new Date(t0 + 1000))
    t.deepEqual(await deliveries(a.id), [])
    await evaluate(new Date(t0 + 2 * 60_000 + 5000))
    const [fired] = await deliveries(a.id)
    t.like(fired.payload, { event: 'fired', observed_value: null })
    t.regex(fired.payload.message, /no data for more than 2 min$/)
    await gauge(u.key, stat, 20)
    await evaluate(new Date(Date.now() + 1000))
    const d = await deliveries(a.id)
    t.deepEqual(
      d.map((x) => x.event),
      ['fired', 'resolved'],
    )
    // Both readings fall in the last minute: its average.
    t.regex(d[1].payload.message, /data is back \(observed 15\)/)
  },
)

test('18 on_no_data is refused on create for conditions about missing data already', async (t) => {
  const u = await user()
  const res = await request(app.url, '/api/v1/alerts', {
    json: {
      stat_name: 'x',
      condition_type: 'missing_data',
      threshold: 0,
      channel: 'webhook',
      channel_config: { webhook_url: receiver.url },
      on_no_data: 'alert',
    },
    bearer: u.key,
  })
  t.is(res.status, 400)
  t.regex(res.body.detail, /on_no_data: applies to threshold conditions only/)
  t.is((await app.sql`select count(*)::int as n from alerts where account_id = ${u.accountId}`)[0].n, 0)
})

// ------------------------------------------------------------------ test deliveries and events

test('18 send a test: 202, one delivery with event "test" signed like any delivery, recorded with its attempt and answer', async (t) => {
  const u = await user()
  const a = await createAlert(u.key)
  const res = await request(app.url, `/api/v1/alerts/${a.id}/test`, { method: 'POST', bearer: u.key })
  t.is(res.status, 202, res.text)
  const [req] = await receiver.waitFor(1, (r) => r.json?.alert_id === a.id)
  t.like(req.json, { alert_id: a.id, event: 'test', status: 'resolved', stat_name: a.stat_name, condition: 'above', threshold: 90 })
  t.is(req.json.idempotency_key, res.body.delivery_id)
  t.is(req.headers['x-service-idempotency-key'], req.json.idempotency_key)
  t.true(verifySignature(a.secret, req.headers['x-service-signature'], req.body), 'signature verifies with the signing secret')
  t.false(verifySignature(`${a.secret}x`, req.headers['x-service-signature'], req.body))
  const history = await eventually(async () => {
    const e = await events(u, a.id)
    return e[0]?.delivery_status === 'delivered' ? e : null
  }, 'the test recorded as delivered')
  t.is(history.length, 1)
  t.like(history[0], { event: 'test', delivery_status: 'delivered' })
  t.is(history[0].deliveries.length, 1)
  t.like(history[0].deliveries[0], { attempt: 1, status_code: 200, error: null })
  // A second test has its own idempotency key.
  const again = await request(app.url, `/api/v1/alerts/${a.id}/test`, { method: 'POST', session: u.session })
  t.is(again.status, 202)
  t.not(again.body.delivery_id, res.body.delivery_id)
})

test('18 a test to a receiver that fails: each attempt and its answer is in the events list', async (t) => {
  const u = await user()
  const failing = await startHttpReceiver()
  t.teardown(() => failing.close())
  const a = await createAlert(u.key, { channel_config: { webhook_url: failing.url } })
  failing.failNext(1, 500)
  t.is((await request(app.url, `/api/v1/alerts/${a.id}/test`, { method: 'POST', bearer: u.key })).status, 202)
  const history = await eventually(
    async () => {
      const e = await events(u, a.id)
      return e[0]?.delivery_status === 'delivered' ? e : null
    },
    'the retried test delivered',
    40_000,
  )
  t.deepEqual(
    history[0].deliveries.map((d) => [d.attempt, d.status_code, d.error]),
    [
      [1, 500, 'receiver answered HTTP 500'],
      [2, 200, null],
    ],
  )
  t.is(failing.requests.length, 2)
})

test('18 send a test through Slack and e-mail: the real channel, marked as a test', async (t) => {
  const u = await user()
  const slack = await createAlert(u.key, { channel: 'slack', channel_config: { slack_webhook_url: receiver.url } })
  t.is((await request(app.url, `/api/v1/alerts/${slack.id}/test`, { method: 'POST', bearer: u.key })).status, 202)
  const [msg] = await receiver.waitFor(1, (r) => typeof r.json?.text === 'string' && r.json.text.includes(slack.stat_name))
  t.regex(msg.json.text, /\*Test\*/)

  const address = `tests.${seq}@example.com`
  const mail = await createAlert(u.key, { channel: 'email', channel_config: { email: address } })
  // Unconfirmed: refused, nothing queued or recorded.
  const refused = await request(app.url, `/api/v1/alerts/${mail.id}/test`, { method: 'POST', bearer: u.key })
  t.is(refused.status, 409)
  t.is(refused.body.code, 'alert_pending_confirmation')
  t.deepEqual(await deliveries(mail.id), [])
  t.is((await events(u, mail.id)).length, 0)
  const [confirmation] = await smtp.waitFor(1, (m) => m.to.includes(address))
  await fetch(/(http\S+\/api\/v1\/email\/confirm\?token=\S+)/.exec(confirmation.text)![1])
  t.is((await request(app.url, `/api/v1/alerts/${mail.id}/test`, { method: 'POST', bearer: u.key })).status, 202)
  const [sent] = await smtp.waitFor(1, (m) => m.to.includes(address) && m.subject.startsWith('[TEST]'))
  t.is(sent.subject, `[TEST] ${mail.stat_name}`)
  t.regex(sent.text, /test delivery/)
})

test.serial(
  '18 events: newest first with fired and resolved deliveries; another account, an unknown id and a bad limit are refused',
  async (t) => {
    const u = await user()
    const a = await createAlert(u.key)
    await gauge(u.key, a.stat_name, 95)
    await evaluate(new Date(Date.now() + 1000))
    await gauge(u.key, a.stat_name, 10)
    await evaluate(new Date(Date.now() + 2000))
    // The evaluation outbox is queued by the schedule; queue these two by hand, as it would.
    for (const d of await deliveries(a.id)) await app.api.deps.queues.enqueue('deliver-alert', { delivery_id: d.id }, { jobId: d.id })
    const history = await eventually(async () => {
      const e = await events(u, a.id)
      return e.every((x) => x.delivery_status === 'delivered') ? e : null
    }, 'both deliveries made')
    t.deepEqual(
      history.map((e) => e.event),
      ['resolved', 'fired'],
    )
    t.is(history[1].observed_value, 95)
    t.true(Date.parse(history[0].at) > Date.parse(history[1].at))
    for (const e of history) t.like(e.deliveries[0], { attempt: 1, status_code: 200 })
    const stranger = await user()
    t.is((await request(app.url, `/api/v1/alerts/${a.id}/events`, { bearer: stranger.key })).status, 404)
    t.is((await request(app.url, `/api/v1/alerts/${a.id}/test`, { method: 'POST', bearer: stranger.key })).status, 404)
    t.is((await request(app.url, '/api/v1/alerts/00000000-0000-4000-8000-000000000000/events', { bearer: u.key })).status, 404)
    t.is((await request(app.url, `/api/v1/alerts/${a.id}/events?limit=0`, { bearer: u.key })).status, 400)
    t.is((await request(app.url, `/api/v1/alerts/${a.id}/events?limit=1`, { bearer: u.key })).body.events.length, 1)
  },
)
