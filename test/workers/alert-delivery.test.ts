// Alert deliveries end to end (docs/decisions.md §I-2.5, §I-3.2, §I-6;
// §8): points written through the v1 API, the real evaluation schedule
// (every second here) and real delivery workers, a local HTTP receiver
// (webhook, Slack) and a local SMTP server. Every receiver listens on loopback.
//
// What an alert reads (shared/alerts/evaluate.ts): for a gauge, the average of
// the points of the last 60 s; with no point in that window nothing changes.
// The tests below keep each scenario well inside 60 s of its first point and
// pick values whose running average is known at each step.
import test, { type ExecutionContext } from 'ava'
import { createHmac } from 'node:crypto'
import { evaluateAlerts } from '../../shared/alerts/evaluate.js'
import { createLogger } from '../../shared/log.js'
import { deliverAlertJob } from '../../workers/deliver-alert.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import {
  eventually,
  startHttpReceiver,
  startSmtpReceiver,
  type HttpReceiver,
  type ReceivedRequest,
  type SmtpReceiver,
} from '../helpers/receivers.js'
import { settle } from '../helpers/storage.js'

let smtp: SmtpReceiver
test.before(async () => {
  smtp = await startSmtpReceiver()
})
const app = appSuite({ workers: true, env: () => ({ ALERT_EVAL_INTERVAL_SECONDS: '1', SMTP_URL: smtp.url }) })
test.serial.after.always(() => smtp?.close())

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
const PAYLOAD_FIELDS = [
  'alert_id',
  'event',
  'status',
  'stat_name',
  'observed_value',
  'condition',
  'threshold',
  'triggered_at',
  'message',
  'idempotency_key',
  'incident_key',
].sort()

let seq = 0

interface Setup {
  key: string
  accountId: string
  stat: string
  alertId: string
  secret: string
  receiver: HttpReceiver
}

/** A fresh account, a local receiver and one alert on a gauge stat that has no data yet. */
async function setup(
  t: ExecutionContext,
  opts: {
    target?: TestApp
    threshold?: number | null
    cooldown?: number
    condition?: string
    channel?: 'webhook' | 'slack'
    window?: number
  } = {},
): Promise<Setup> {
  const target = opts.target ?? app
  const u = await signUp(target.url)
  const { key } = await createKey(target.url, u)
  const receiver = await startHttpReceiver()
  t.teardown(() => receiver.close())
  const stat = `gauge ${++seq}.${u.accountId.slice(0, 6)}`
  const alert = await createAlert(target, key, stat, receiver, opts)
  return { key, accountId: u.accountId, stat, alertId: alert.id, secret: alert.secret, receiver }
}

async function createAlert(
  target: TestApp,
  key: string,
  stat: string,
  receiver: HttpReceiver,
  opts: { threshold?: number | null; cooldown?: number; condition?: string; channel?: 'webhook' | 'slack'; window?: number } = {},
) {
  const channel = opts.channel ?? 'webhook'
  const res = await request(target.url, '/api/v1/alerts', {
    json: {
      // null: no threshold at all (heartbeat and missing_data take none).
      stat_name: stat,
      condition_type: opts.condition ?? 'above',
      ...(opts.threshold === null ? {} : { threshold: opts.threshold ?? 50 }),
      window_minutes: opts.window ?? 1,
      channel,
      channel_config: channel === 'slack' ? { slack_webhook_url: receiver.url } : { webhook_url: receiver.url },
      cooldown_minutes: opts.cooldown ?? 0,
    },
    bearer: key,
  })
  if (res.status !== 201) throw new Error(`alert creation failed: ${res.status} ${res.text}`)
  return { id: res.body.alert.id as string, secret: res.body.signing_secret as string }
}

/** Writes one gauge reading through the v1 API and waits until it is persisted. */
async function gauge(key: string, stat: string, value: number, target = app): Promise<void> {
  const res = await request(target.url, `/api/v1/stats/${encodeURIComponent(stat)}/value`, { json: { value }, bearer: key })
  if (res.status !== 200) throw new Error(`write failed: ${res.status} ${res.text}`)
  await settle(target)
}

interface AlertRowState {
  state: string
  last_value: number | null
  last_delivery_error: string | null
}

async function alertRow(id: string, target = app): Promise<AlertRowState | undefined> {
  const [row] = await target.sql<AlertRowState[]>`select state, last_value, last_delivery_error from alerts where id = ${id}`
  return row
}

/** Waits until an evaluation pass has seen `value` and left the alert in `state`. */
async function evaluatedAs(id: string, state: string, value: number, target = app, timeoutMs = 30_000): Promise<void> {
  await eventually(
    async () => {
      const row = await alertRow(id, target)
      return row && row.state === state && row.last_value !== null && Math.abs(row.last_value - value) < 1e-9
    },
    `alert ${id} evaluated as ${state} with value ${value} (now ${JSON.stringify(await alertRow(id, target))})`,
    timeoutMs,
  )
}

/**
 * Waits until the evaluation schedule has run `passes` more passes over each alert (every pass stamps
 * last_evaluated_at on every confirmed alert), then until each delivery those passes queued has been attempted.
 * "Nothing more was sent" after this means the passes that would have sent it ran, not that some time went by.
 */
async function quiet(alertIds: string[], passes = 3, target = app): Promise<void> {
  const stamp = async (id: string) => {
    const [row] = await target.sql<{ at: Date | null }[]>`select last_evaluated_at as at from alerts where id = ${id}`
    return row?.at?.getTime() ?? null
  }
  await Promise.all(
    alertIds.map(async (id) => {
      const seen = new Set<number>()
      const first = await stamp(id)
      await eventually(
        async () => {
          const at = await stamp(id)
          if (at !== null && at !== first) seen.add(at)
          return seen.size >= passes
        },
        `${passes} evaluation passes over alert ${id}`,
        30_000,
        50,
      )
      await eventually(
        async () => (await deliveryRows(id, target)).every((r) => r.status !== 'queued'),
        `the deliveries of alert ${id} attempted`,
      )
    }),
  )
}

function verifySignature(secret: string, header: string | undefined, body: string): { ok: boolean; t: number } {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '')
  if (!m) return { ok: false, t: 0 }
  const expected = createHmac('sha256', secret).update(`${m[1]}.${body}`).digest('hex')
  return { ok: expected === m[2], t: Number(m[1]) }
}

async function deliveryRows(alertId: string, target = app) {
  return [
    ...(await target.sql<{ id: string; event: string; status: string; attempts: number; last_error: string | null; payload: any }[]>`
    select id, event, status, attempts, last_error, payload from alert_deliveries where alert_id = ${alertId} order by created_at, event desc`),
  ]
}

function assertPayload(t: ExecutionContext, req: ReceivedRequest, s: Setup, event: 'fired' | 'resolved', observed: number) {
  const p = req.json
  t.deepEqual(Object.keys(p).sort(), PAYLOAD_FIELDS)
  t.like(p, {
    alert_id: s.alertId,
    event,
    status: event === 'fired' ? 'firing' : 'resolved',
    stat_name: s.stat,
    condition: 'above',
    threshold: 50,
  })
  t.true(Math.abs(p.observed_value - observed) < 1e-9, `observed_value ${p.observed_value}, expected ${observed}`)
  t.regex(p.triggered_at, ISO_UTC)
  t.true(Math.abs(Date.parse(p.triggered_at) - req.at) < 30_000)
  t.is(typeof p.message, 'string')
  t.true(p.message.includes(s.stat))
  t.is(typeof p.idempotency_key, 'string')
  t.true(p.idempotency_key.length > 0)
  t.is(typeof p.incident_key, 'string')
  t.true(p.incident_key.length > 0)
  // Section 6.3: the headers carry the same keys as the payload.
  t.is(req.method, 'POST')
  t.is(req.path, '/hook')
  t.regex(String(req.headers['content-type']), /^application\/json/)
  t.is(req.headers['x-service-idempotency-key'], p.idempotency_key)
  t.is(req.headers['x-service-incident-key'], p.incident_key)
  // docs/decisions.md §8: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>"> under the alert's signing secret.
  const sig = verifySignature(s.secret, req.headers['x-service-signature'] as string | undefined, req.body)
  t.true(sig.ok, `signature ${req.headers['x-service-signature']} does not verify`)
  t.true(Math.abs(sig.t - req.at / 1000) < 30, 'signature timestamp is the time of sending')
  t.false(verifySignature(`${s.secret}x`, req.headers['x-service-signature'] as string, req.body).ok)
}

// ------------------------------------------------------------------ fire, continue, resolve

test('3.2 none -> firing: a gauge above the threshold sends ONE signed `fired` webhook with every field of 2.5; while the breach continues nothing more is sent', async (t) => {
  t.timeout(120_000)
  const s = await setup(t)
  await gauge(s.key, s.stat, 100)
  const started = Date.now()
  const [fired] = await s.receiver.waitFor(1, (r) => r.json?.event === 'fired', 20_000)
  t.log(`fired delivery arrived ${Date.now() - started} ms after the point was persisted`)
  assertPayload(t, fired, s, 'fired', 100)

  // firing -> firing: more breaching points, no new delivery.
  await gauge(s.key, s.stat, 200)
  await evaluatedAs(s.alertId, 'firing', 150)
  await quiet([s.alertId])
  t.is(s.receiver.requests.length, 1)
  const rows = await deliveryRows(s.alertId)
  t.is(rows.length, 1)
  t.like(rows[0], { id: fired.json.idempotency_key, event: 'fired', status: 'delivered', attempts: 1, last_error: null })
  t.is((await alertRow(s.alertId))?.state, 'firing')
})

test('3.2 firing -> resolved: the value comes back, ONE `resolved` with the same incident_key and a different idempotency_key', async (t) => {
  t.timeout(120_000)
  const s = await setup(t)
  await gauge(s.key, s.stat, 100)
  const [fired] = await s.receiver.waitFor(1, (r) => r.json?.event === 'fired')
  // The last-minute average becomes (100 - 1000) / 2 = -450, inside the threshold.
  await gauge(s.key, s.stat, -1000)
  const [resolved] = await s.receiver.waitFor(1, (r) => r.json?.event === 'resolved')
  assertPayload(t, resolved, s, 'resolved', -450)
  t.is(resolved.json.incident_key, fired.json.incident_key)
  t.not(resolved.json.idempotency_key, fired.json.idempotency_key)
  t.true(Date.parse(resolved.json.triggered_at) > Date.parse(fired.json.triggered_at))

  await quiet([s.alertId])
  t.deepEqual(
    s.receiver.requests.map((r) => r.json.event),
    ['fired', 'resolved'],
  )
  t.deepEqual(
    (await deliveryRows(s.alertId)).map((r) => [r.event, r.status]),
    [
      ['fired', 'delivered'],
      ['resolved', 'delivered'],
    ],
  )
  t.is((await alertRow(s.alertId))?.state, 'ok')
  const list = await request(app.url, '/api/v1/alerts', { bearer: s.key })
  t.like(list.body.alerts[0], { id: s.alertId, state: 'ok', last_value: -450, last_delivery_error: null })
})

test('3.2 a new breach after a resolve is a new incident: new incident_key', async (t) => {
  t.timeout(120_000)
  const s = await setup(t)
  await gauge(s.key, s.stat, 100)
  await s.receiver.waitFor(1, (r) => r.json?.event === 'fired')
  await gauge(s.key, s.stat, -1000) // avg -450
  await s.receiver.waitFor(1, (r) => r.json?.event === 'resolved')
  await gauge(s.key, s.stat, 3000) // avg 700
  const fires = await s.receiver.waitFor(2, (r) => r.json?.event === 'fired')
  t.not(fires[1].json.incident_key, fires[0].json.incident_key)
  t.not(fires[1].json.idempotency_key, fires[0].json.idempotency_key)
  t.is(fires[1].json.observed_value, 700)
})

test('2.4 exactly at the threshold never fires and counts as recovered', async (t) => {
  t.timeout(120_000)
  const s = await setup(t)
  await gauge(s.key, s.stat, 50)
  await evaluatedAs(s.alertId, 'ok', 50)
  await quiet([s.alertId])
  t.is(s.receiver.requests.length, 0, 'a value equal to the threshold must not fire')

  await gauge(s.key, s.stat, 100) // avg 75: breach
  await s.receiver.waitFor(1, (r) => r.json?.event === 'fired')
  await gauge(s.key, s.stat, 0) // avg (50 + 100 + 0) / 3 = 50: exactly at the threshold
  const [resolved] = await s.receiver.waitFor(1, (r) => r.json?.event === 'resolved')
  t.is(resolved.json.observed_value, 50)
  await evaluatedAs(s.alertId, 'ok', 50)
})

test('2.4 exactly at the threshold of a `below` alert never fires either', async (t) => {
  t.timeout(120_000)
  const s = await setup(t, { condition: 'below', threshold: 10 })
  await gauge(s.key, s.stat, 10)
  await evaluatedAs(s.alertId, 'ok', 10)
  await quiet([s.alertId])
  t.is(s.receiver.requests.length, 0)
  await gauge(s.key, s.stat, 7) // avg 8.5 < 10
  const [fired] = await s.receiver.waitFor(1, (r) => r.json?.event === 'fired')
  t.like(fired.json, { condition: 'below', threshold: 10, observed_value: 8.5 })
})

test('3.2 cooldown: fire, resolve, breach again within the cooldown -> no second fire, and its recovery sends no resolve', async (t) => {
  t.timeout(120_000)
  const s = await setup(t, { cooldown: 10 })
  await gauge(s.key, s.stat, 100)
  const [fired] = await s.receiver.waitFor(1, (r) => r.json?.event === 'fired')
  await gauge(s.key, s.stat, -1000) // avg -450
  const [resolved] = await s.receiver.waitFor(1, (r) => r.json?.event === 'resolved')
  t.is(resolved.json.incident_key, fired.json.incident_key) // the cooldown never withholds a resolve

  await gauge(s.key, s.stat, 2000) // avg 1100 / 3: breach again, within the 10-minute cooldown
  await evaluatedAs(s.alertId, 'firing', 1100 / 3)
  await gauge(s.key, s.stat, -5000) // avg -975: recovers
  await evaluatedAs(s.alertId, 'ok', -975)
  await quiet([s.alertId])
  t.deepEqual(
    s.receiver.requests.map((r) => r.json.event),
    ['fired', 'resolved'],
  )
  t.deepEqual(
    (await deliveryRows(s.alertId)).map((r) => r.event),
    ['fired', 'resolved'],
  )
})

test('a counter alert reads the sum of the last minute: two writes of 6 fire an `above 10` alert with observed_value 12', async (t) => {
  t.timeout(120_000)
  const s = await setup(t, { threshold: 10 })
  const count = async (n: number) => {
    const res = await request(app.url, `/api/v1/stats/${encodeURIComponent(s.stat)}/count`, { json: { count: n }, bearer: s.key })
    if (res.status !== 200) throw new Error(res.text)
    await settle(app)
  }
  await count(6)
  await evaluatedAs(s.alertId, 'ok', 6)
  await count(6)
  const [fired] = await s.receiver.waitFor(1, (r) => r.json?.event === 'fired')
  t.like(fired.json, { event: 'fired', observed_value: 12, threshold: 10 })
})

// ------------------------------------------------------------------ heartbeat (time travel)

test('2.4 heartbeat on a stat with no data at all fires once staleness exceeds window_minutes (evaluated at a later time)', async (t) => {
  // Its own database without workers: the evaluations here are called directly, at chosen times.
  const tt = await startTestApp()
  t.teardown(() => tt.close())
  // Neither takes a threshold (their limit is the window).
  const s = await setup(t, { target: tt, condition: 'heartbeat', threshold: null, window: 1 })
  const missing = await createAlert(tt, s.key, `${s.stat} too`, s.receiver, { condition: 'missing_data', threshold: null, window: 1 })
  const created = Date.now()
  const outbox = async () => [
    ...(await tt.sql<{ alert_id: string; event: string; status: string; payload: any }[]>`
    select alert_id, event, status, payload from alert_deliveries order by alert_id`),
  ]

  t.deepEqual((await evaluateAlerts(tt.sql, new Date(created + 1_000))).deliveries, [])
  t.deepEqual((await evaluateAlerts(tt.sql, new Date(created + 30_000))).deliveries, [])
  t.deepEqual(await outbox(), [])

  const at = new Date(created + 2 * 60_000)
  const pass = await evaluateAlerts(tt.sql, at)
  t.is(pass.evaluated, 2)
  t.is(pass.deliveries.length, 2)
  const rows = await outbox()
  t.is(rows.length, 2)
  const hb = rows.find((r) => r.alert_id === s.alertId)!
  t.like(hb, { event: 'fired', status: 'queued' })
  t.like(hb.payload, {
    alert_id: s.alertId,
    event: 'fired',
    status: 'firing',
    stat_name: s.stat,
    condition: 'heartbeat',
    triggered_at: at.toISOString(),
  })
  t.true(hb.payload.observed_value > 60, `staleness ${hb.payload.observed_value} s`)
  t.true(hb.payload.observed_value < 180)
  // Said plainly, whole seconds against the window (it read "no data for more than (s) 60 (observed 120.004)").
  t.regex(
    hb.payload.message,
    new RegExp(`^${s.stat.replace(/[.]/g, '\\.')}: no data for 2 min( \\d+ s)? \\(limit 1 min\\)$`),
    hb.payload.message,
  )
  t.like(
    rows.find((r) => r.alert_id === missing.id),
    { event: 'fired', status: 'queued' },
  )
  t.is((await alertRow(s.alertId, tt))?.state, 'firing')

  // Still stale later: firing -> firing, no new delivery.
  t.deepEqual((await evaluateAlerts(tt.sql, new Date(created + 3 * 60_000))).deliveries, [])
  t.is((await outbox()).length, 2)
  t.is(s.receiver.requests.length, 0) // nothing runs the deliveries here
})

test('6.5 a failed delivery attempt is recorded on the delivery; the final one marks it failed and shows the error on the alert', async (t) => {
  const tt = await startTestApp()
  t.teardown(() => tt.close())
  const s = await setup(t, { target: tt, condition: 'heartbeat', threshold: 0, window: 1 })
  s.receiver.answerAlways(503)
  const [id] = (await evaluateAlerts(tt.sql, new Date(Date.now() + 2 * 60_000))).deliveries
  t.truthy(id)
  const deps = { config: tt.config, sql: tt.sql, log: createLogger({ logLevel: 'silent' }), queues: tt.api.deps.queues }

  const first = await t.throwsAsync(deliverAlertJob(deps, { delivery_id: id }, new Date(), { number: 1, final: false }))
  t.regex(first!.message, /503/)
  t.like((await deliveryRows(s.alertId, tt))[0], { status: 'queued', attempts: 1, last_error: 'receiver answered HTTP 503' })
  t.is((await alertRow(s.alertId, tt))?.last_delivery_error, null) // not final yet

  await t.throwsAsync(deliverAlertJob(deps, { delivery_id: id }, new Date(), { number: 12, final: true }))
  t.like((await deliveryRows(s.alertId, tt))[0], { status: 'failed', attempts: 2, last_error: 'receiver answered HTTP 503' })
  const list = await request(tt.url, '/api/v1/alerts', { bearer: s.key })
  t.is(list.body.alerts[0].last_delivery_error, 'receiver answered HTTP 503')
  t.regex(list.body.alerts[0].last_delivery_failed_at, ISO_UTC)

  // A failed delivery is not retried by a stray job.
  s.receiver.answerAlways(200)
  t.deepEqual(await deliverAlertJob(deps, { delivery_id: id }, new Date(), { number: 1, final: false }), { status: 'failed' })
  t.is(s.receiver.requests.length, 2)
})

// ------------------------------------------------------------------ retries

test('6.5 receiver down (503 twice) then up: the delivery arrives once more with the same idempotency key and is marked delivered', async (t) => {
  t.timeout(120_000)
  const s = await setup(t)
  s.receiver.failNext(2)
  await gauge(s.key, s.stat, 100)
  const all = await s.receiver.waitFor(3, () => true, 60_000)
  t.deepEqual(
    all.map((r) => r.status),
    [503, 503, 200],
  )
  const keys = new Set(all.map((r) => r.headers['x-service-idempotency-key']))
  t.is(keys.size, 1)
  t.true(
    all.every((r) => r.body === all[0].body),
    'every re-send carries the same payload',
  )
  t.true(all.every((r) => verifySignature(s.secret, r.headers['x-service-signature'] as string, r.body).ok))
  // Backoff: the retries are spaced out, not immediate.
  t.true(all[1].at - all[0].at >= 2_000, `first retry after ${all[1].at - all[0].at} ms`)
  t.true(all[2].at - all[1].at >= 2_000, `second retry after ${all[2].at - all[1].at} ms`)
  await eventually(async () => (await deliveryRows(s.alertId))[0]?.status === 'delivered', 'delivery marked delivered')
  t.like((await deliveryRows(s.alertId))[0], { id: [...keys][0], status: 'delivered', attempts: 3, last_error: null })
  await quiet([s.alertId])
  t.is(s.receiver.requests.length, 3)
  t.is(s.receiver.accepted().length, 1)
  // The operator sees each failure and the delivery in the log, without the target URL.
  const lines = app.logs.map((l) => JSON.parse(l)).filter((l) => l.alert_id === s.alertId)
  t.deepEqual(
    lines.map((l) => l.message),
    ['alert delivery failed, will retry', 'alert delivery failed, will retry', 'alert delivered'],
  )
  t.like(lines[2], { level: 'info', channel: 'webhook', attempt: 3 })
  t.false(
    app.logs.some((l) => l.includes(s.receiver.url)),
    'the receiver URL is not logged',
  )
})

test('6.5 after a failed attempt the delivery row shows the attempts and the last error (real worker)', async (t) => {
  t.timeout(120_000)
  const s = await setup(t)
  s.receiver.answerAlways(503)
  await gauge(s.key, s.stat, 100)
  await s.receiver.waitFor(1)
  const row = await eventually(async () => {
    const [r] = await deliveryRows(s.alertId)
    return r && r.attempts >= 1 ? r : null
  }, 'a recorded attempt')
  t.like(row, { event: 'fired', status: 'queued', last_error: 'receiver answered HTTP 503' })
  t.is((await alertRow(s.alertId))?.last_delivery_error, null) // shown on the alert only once the attempts are exhausted
  // Stop the retries of this test.
  t.is((await request(app.url, `/api/v1/alerts/${s.alertId}`, { method: 'DELETE', bearer: s.key })).status, 204)
})

test('3.2 delete an alert while its delivery is queued: no further request arrives and no resolve is ever sent', async (t) => {
  t.timeout(120_000)
  const s = await setup(t)
  // A second alert on the same stat, to a receiver of its own, shows when the evaluations past the recovery have run.
  const witnessReceiver = await startHttpReceiver()
  t.teardown(() => witnessReceiver.close())
  const witness = await createAlert(app, s.key, s.stat, witnessReceiver)
  s.receiver.answerAlways(503)
  await gauge(s.key, s.stat, 100)
  const [first] = await s.receiver.waitFor(1)
  const deliveryId = first.headers['x-service-idempotency-key'] as string
  // Wait for the failed attempt to be recorded, so the job sits in its backoff.
  await eventually(async () => (await deliveryRows(s.alertId))[0]?.attempts >= 1, 'the failed attempt')
  t.is((await request(app.url, `/api/v1/alerts/${s.alertId}`, { method: 'DELETE', bearer: s.key })).status, 204)
  s.receiver.answerAlways(200) // a retry, had one happened, would now succeed and be seen

  t.deepEqual(await deliveryRows(s.alertId), [])
  // The job is removed from its backoff; if the delete raced the end of the attempt (job still locked),
  // the retry finds its delivery gone and completes as 'dropped' without sending.
  await eventually(
    async () => {
      const job = await app.api.deps.queues.get('deliver').getJob(deliveryId)
      return job === undefined || ((await job.getState()) === 'completed' && job.returnvalue?.status === 'dropped')
    },
    'the queued job to be dropped',
    10_000,
  )

  await gauge(s.key, s.stat, -1000) // the value recovers: a live alert would resolve now
  await witnessReceiver.waitFor(1, (r) => r.json?.event === 'resolved')
  await quiet([witness.id])
  t.is(s.receiver.requests.length, 1)
  t.is(s.receiver.requests.filter((r) => r.json?.event === 'resolved').length, 0)
})

test('6.5 egress is checked again at delivery: with WEBHOOK_ALLOW_PRIVATE=0 on the workers, a loopback target gets nothing and the refusal is recorded', async (t) => {
  t.timeout(120_000)
  // Workers that refuse private targets; the alert is created through a permissive API on the same database.
  const strict = await startTestApp({ ALERT_EVAL_INTERVAL_SECONDS: '1', WEBHOOK_ALLOW_PRIVATE: '0' })
  t.teardown(() => strict.close())
  const permissive = await strict.another({ WEBHOOK_ALLOW_PRIVATE: '1' })
  await strict.startWorkers()
  const s = await setup(t, { target: permissive })
  await gauge(s.key, s.stat, 100, permissive)
  const row = await eventually(async () => {
    const [r] = await deliveryRows(s.alertId, strict)
    return r && r.attempts >= 1 ? r : null
  }, 'a refused attempt')
  t.is(row.status, 'queued')
  t.regex(row.last_error ?? '', /a loopback address, not a public one; .*WEBHOOK_ALLOW_PRIVATE=1/)
  // The retry (2.5 to 5 s later) is refused as well: nothing has reached the receiver after it.
  const retried = await eventually(async () => {
    const [r] = await deliveryRows(s.alertId, strict)
    return r && r.attempts >= 2 ? r : null
  }, 'a second refused attempt')
  t.is(retried.status, 'queued')
  t.regex(retried.last_error ?? '', /a loopback address/)
  t.is(s.receiver.requests.length, 0)
  t.is((await request(permissive.url, `/api/v1/alerts/${s.alertId}`, { method: 'DELETE', bearer: s.key })).status, 204)
})

// ------------------------------------------------------------------ two workers

test('two worker processes: still exactly one `fired` and one `resolved` per transition', async (t) => {
  t.timeout(120_000)
  const two = await startTestApp({ ALERT_EVAL_INTERVAL_SECONDS: '1' })
  t.teardown(() => two.close())
  await two.startWorkers()
  await two.startWorkers()
  const schedulers = await two.api.deps.queues.get('alerts').getJobSchedulers()
  t.is(schedulers.filter((j) => j.key === 'evaluate-alerts').length, 1)

  const receiver = await startHttpReceiver()
  t.teardown(() => receiver.close())
  const alerts: Array<{ key: string; stat: string; id: string }> = []
  for (let a = 0; a < 2; a++) {
    const u = await signUp(two.url)
    const { key } = await createKey(two.url, u)
    for (let i = 0; i < 2; i++) {
      const stat = `pair ${a}.${i}`
      alerts.push({ key, stat, id: (await createAlert(two, key, stat, receiver)).id })
    }
  }
  await Promise.all(alerts.map((a) => gauge(a.key, a.stat, 100, two)))
  await receiver.waitFor(alerts.length, (r) => r.json?.event === 'fired', 20_000)
  await Promise.all(alerts.map((a) => gauge(a.key, a.stat, -1000, two)))
  await receiver.waitFor(alerts.length, (r) => r.json?.event === 'resolved', 20_000)
  await quiet(
    alerts.map((a) => a.id),
    3,
    two,
  )
  for (const a of alerts) {
    const mine = receiver.requests.filter((r) => r.json.alert_id === a.id)
    t.deepEqual(
      mine.map((r) => r.json.event),
      ['fired', 'resolved'],
      a.stat,
    )
  }
  t.is(receiver.requests.length, alerts.length * 2)
})

// ------------------------------------------------------------------ Slack and e-mail

test('6.1 Slack channel: the incoming webhook gets a JSON {text} message with the stat name and the event', async (t) => {
  t.timeout(120_000)
  const s = await setup(t, { channel: 'slack' })
  await gauge(s.key, s.stat, 100)
  const [fired] = await s.receiver.waitFor(1)
  t.is(fired.method, 'POST')
  t.regex(String(fired.headers['content-type']), /^application\/json/)
  t.deepEqual(Object.keys(fired.json), ['text'])
  t.true(fired.json.text.includes(s.stat), fired.json.text)
  t.regex(fired.json.text, /firing/i)
  // The stat's name links to its page in the app, never to a JSON route.
  const slackLink = /<([^|>]+)\|/.exec(fired.json.text)?.[1]
  t.is(new URL(slackLink ?? 'http://none/').pathname, `/stats/${encodeURIComponent(s.stat)}`, fired.json.text)
  t.false(fired.json.text.includes('/api/'), fired.json.text)
  await gauge(s.key, s.stat, -1000)
  const [, resolved] = await s.receiver.waitFor(2)
  t.deepEqual(Object.keys(resolved.json), ['text'])
  t.true(resolved.json.text.includes(s.stat), resolved.json.text)
  t.regex(resolved.json.text, /resolved/i)
  await quiet([s.alertId])
  t.is(s.receiver.requests.length, 2)
})

test('6.1 e-mail channel: nothing is mailed before confirmation; after it the local SMTP server gets a [FIRING] mail, then [RESOLVED]', async (t) => {
  t.timeout(120_000)
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  const address = `oncall.${u.accountId.slice(0, 8)}@example.com`
  const stat = `mail gauge ${++seq}`
  const res = await request(app.url, '/api/v1/alerts', {
    json: {
      stat_name: stat,
      condition_type: 'above',
      threshold: 50,
      window_minutes: 1,
      channel: 'email',
      channel_config: { email: address },
      cooldown_minutes: 0,
    },
    bearer: key,
  })
  t.is(res.status, 201, res.text)
  t.is(res.body.alert.state, 'pending_confirmation')
  const [confirmation] = await smtp.waitFor(1, (m) => m.to.includes(address))
  const link = /(https?:\/\/\S+\/api\/v1\/email\/confirm\?token=\S+)/.exec(confirmation.text)?.[1]
  t.truthy(link, confirmation.text)

  // A breach before confirming: not evaluated, nothing mailed. A confirmed webhook alert on the same stat
  // shows when the evaluations that would have mailed have run.
  const witnessReceiver = await startHttpReceiver()
  t.teardown(() => witnessReceiver.close())
  const witness = await createAlert(app, key, stat, witnessReceiver)
  await gauge(key, stat, 100)
  await witnessReceiver.waitFor(1, (r) => r.json?.event === 'fired')
  await quiet([witness.id])
  t.is(smtp.mails.filter((m) => m.to.includes(address)).length, 1)
  t.is((await alertRow(res.body.alert.id))?.state, 'pending_confirmation')

  // The mail's "At:" is on the account's clock (set before confirming: the breach is mailed as soon as it is
  // confirmed, and a zone set after could come too late for it).
  t.is(
    (await request(app.url, '/api/v1/account', { method: 'PATCH', json: { time_zone: 'Asia/Kolkata' }, session: u.session })).status,
    200,
  )
  const url = new URL(link!)
  t.is(url.origin, new URL(app.url).origin) // no PUBLIC_URL here: the link points at this deployment
  // The confirmation is a page for a person, with the way on to the app.
  const confirmed = await request(app.url, url.pathname + url.search)
  t.is(confirmed.status, 200)
  t.regex(String(confirmed.headers.get('content-type')), /^text\/html/)
  t.regex(confirmed.text, /Address confirmed[\s\S]*<a href="\/alerts"[ >]/)
  const [firing] = await smtp.waitFor(1, (m) => m.to.includes(address) && m.subject.startsWith('[FIRING]'))
  t.is(firing.subject, `[FIRING] ${stat}`)
  t.true(firing.text.includes(stat))
  t.true(firing.text.includes('100'))
  // The mail's link is the stat's page in the app, which opens for the signed-in reader
  // (it was a JSON route that a browser opens without its key: 401).
  const statUrl = new URL(/(https?:\/\/\S+\/stats\/\S+)/.exec(firing.text)?.[1] ?? 'http://none/')
  t.is(statUrl.pathname, `/stats/${encodeURIComponent(stat)}`)
  t.false(firing.text.includes('/api/'), firing.text)
  const page = await request(app.url, statUrl.pathname, { session: u.session })
  t.is(page.status, 200)
  t.regex(String(page.headers.get('content-type')), /^text\/html/)
  // And the alert's own page, where it is muted.
  const alertUrl = new URL(/(https?:\/\/\S+\/alerts\/\S+)/.exec(firing.text)?.[1] ?? 'http://none/')
  t.is(alertUrl.pathname, `/alerts/${res.body.alert.id}`)
  t.is((await request(app.url, alertUrl.pathname, { session: u.session })).status, 200)
  const at = /At: (.+)/.exec(firing.text)?.[1] ?? ''
  t.regex(at, /^\d{1,2} \w{3} \d{4}, \d{2}:\d{2}:\d{2} GMT\+5:30$/, firing.text)

  await gauge(key, stat, -1000)
  const [resolved] = await smtp.waitFor(1, (m) => m.to.includes(address) && m.subject.startsWith('[RESOLVED]'))
  t.is(resolved.subject, `[RESOLVED] ${stat}`)
  const incident = (m: { text: string }) => /Incident: (\S+)/.exec(m.text)?.[1]
  t.truthy(incident(firing))
  t.is(incident(resolved), incident(firing))
  await quiet([res.body.alert.id])
  t.deepEqual(
    smtp.mails.filter((m) => m.to.includes(address)).map((m) => m.subject.slice(0, 10)),
    [confirmation.subject.slice(0, 10), '[FIRING] m', '[RESOLVED]'],
  )
})
