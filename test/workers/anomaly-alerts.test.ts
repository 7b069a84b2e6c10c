// Anomaly alerts end to end (docs/decisions.md §16): an alert with condition_type "anomaly" fires through its
// webhook, signed, when the anomaly sweep opens an incident on its stat after the alert was created, and resolves
// when the incident closes. Points go through the v1 API, the sweep and the evaluation run as the workers run
// them, and a local receiver takes the deliveries.
import test from 'ava'
import { createHmac } from 'node:crypto'
import { HOUR } from '../../shared/anomalies/detector.js'
import { newestCompleteHour, sweep } from '../../shared/anomalies/sweep.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startHttpReceiver } from '../helpers/receivers.js'
import { settle } from '../helpers/storage.js'

const app = appSuite({ workers: true, env: { ALERT_EVAL_INTERVAL_SECONDS: '1' } })

const OPTS = { staleAfterSeconds: 900 }

async function user(plan: string) {
  const u = await signUp(app.url)
  await app.sql`update accounts set plan = ${plan} where id = ${u.accountId}`
  return { ...u, key: (await createKey(app.url, u)).key }
}

/** Hourly gauge points (mid-hour) ending in hour `last`, written with past t through the v1 API and rolled up. */
async function write(key: string, stat: string, values: number[], last: number) {
  const points = values.map((value, i) => ({ stat, value, t: last - (values.length - 1 - i) * HOUR + 1800 }))
  const res = await request(app.url, '/api/v1/points', { bearer: key, json: { points } })
  if (res.status !== 200) throw new Error(`write failed: ${res.status} ${res.text}`)
  await settle(app)
  await refreshRollups(app.sql)
}

const signed = (secret: string, header: string, body: string) => {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)
  return m !== null && createHmac('sha256', secret).update(`${m[1]}.${body}`).digest('hex') === m[2]
}

test.serial('an anomaly alert fires, signed, when an incident opens on its stat and resolves when it closes', async (t) => {
  const u = await user('pro')
  const receiver = await startHttpReceiver()
  t.teardown(() => receiver.close())
  const created = await request(app.url, '/api/v1/alerts', {
    bearer: u.key,
    json: { stat_name: 'checkout.latency', condition_type: 'anomaly', channel: 'webhook', channel_config: { webhook_url: receiver.url } },
  })
  t.is(created.status, 201, created.text)
  const { alert, signing_secret: secret } = created.body
  t.like(alert, { condition_type: 'anomaly', state: 'ok' })

  // Two days steady, then a 20x hour, two hours before the newest complete one: the sweep as of then opens an incident.
  const now = new Date()
  const newest = newestCompleteHour(now)
  const steady = Array.from({ length: 48 }, (_, i) => 120 * (1 + 0.05 * Math.sin(i * 1.7)))
  await write(u.key, 'checkout.latency', [...steady, 2400], newest - 2 * HOUR)
  await sweep(app.sql, new Date(now.getTime() - 2 * HOUR * 1000), OPTS)
  const [fired] = await receiver.waitFor(1, (r) => r.json?.event === 'fired')
  t.like(fired.json, {
    alert_id: alert.id,
    event: 'fired',
    status: 'firing',
    stat_name: 'checkout.latency',
    condition: 'anomaly',
    observed_value: 2400,
  })
  t.regex(fired.json.message, /^checkout\.latency: anomaly: .*it was 2400, [\d.]+ times the usual spread above/)
  t.regex(fired.json.message, / UTC/, 'an account without a zone reads UTC')
  t.true(signed(secret, String(fired.headers['x-service-signature']), fired.body), "signed with the alert's secret")

  // Two normal hours: the incident closes, the alert resolves with the same incident key and the peak.
  await write(u.key, 'checkout.latency', [118, 121], newest)
  await sweep(app.sql, now, OPTS)
  const [resolved] = await receiver.waitFor(1, (r) => r.json?.event === 'resolved')
  t.like(resolved.json, {
    alert_id: alert.id,
    event: 'resolved',
    status: 'resolved',
    condition: 'anomaly',
    observed_value: 2400,
    incident_key: fired.json.incident_key,
  })
  t.regex(resolved.json.message, /the anomaly is over \(its peak was 2400\)/)
  t.true(signed(secret, String(resolved.headers['x-service-signature']), resolved.body))
  t.is(receiver.requests.filter((r) => r.json?.event === 'fired').length, 1, 'one fire for one incident')
})

test.serial("an anomaly alert's own sensitivity: at low it stays quiet on an incident 4.5 spreads out that fires the stat's", async (t) => {
  const u = await user('pro')
  const receiver = await startHttpReceiver()
  t.teardown(() => receiver.close())
  const make = async (extra: object) => {
    const res = await request(app.url, '/api/v1/alerts', {
      bearer: u.key,
      json: {
        stat_name: 'api.p95',
        condition_type: 'anomaly',
        channel: 'webhook',
        channel_config: { webhook_url: receiver.url },
        ...extra,
      },
    })
    t.is(res.status, 201, res.text)
    return res.body.alert
  }
  const normal = await make({})
  const low = await make({ anomaly_sensitivity: 'low' })
  t.is(normal.anomaly_sensitivity, null)
  t.is(low.anomaly_sensitivity, 'low')
  const now = new Date()
  const newest = newestCompleteHour(now)
  await write(
    u.key,
    'api.p95',
    Array.from({ length: 72 }, (_, i) => 120 * (1 + 0.05 * Math.sin(i * 1.7))),
    newest - HOUR,
  )
  const band = (await request(app.url, '/api/v1/anomalies/backtest?stat=api.p95&range=24h', { bearer: u.key })).body.buckets.findLast(
    (b: any) => b.observed !== null,
  )
  await write(u.key, 'api.p95', [band.expected + 4.5 * ((band.upper - band.expected) / 4)], newest)
  await sweep(app.sql, now, OPTS)
  const [peak] = await app.sql<{ score: number }[]>`
    select (a.peak ->> 'score')::float8 as score from anomalies a join stats s on s.id = a.stat_id where s.account_id = ${u.accountId}`
  t.true(peak.score >= 4 && peak.score < 5, `peak ${peak.score} spreads`)
  const [fired] = await receiver.waitFor(1, (r) => r.json?.event === 'fired')
  t.is(fired.json.alert_id, normal.id)
  // Both alerts are judged in the same pass: the low one was evaluated and stayed ok.
  const [row] = await app.sql<{ state: string; last_evaluated_at: Date | null }[]>`
    select state, last_evaluated_at from alerts where id = ${low.id}`
  t.truthy(row.last_evaluated_at)
  t.is(row.state, 'ok')
  t.deepEqual(
    receiver.requests.filter((r) => r.json?.alert_id === low.id),
    [],
  )
})

test.serial('an incident recorded before the alert existed does not fire it', async (t) => {
  const u = await user('starter')
  const receiver = await startHttpReceiver()
  t.teardown(() => receiver.close())
  const now = new Date()
  const newest = newestCompleteHour(now)
  await write(u.key, 'queue.depth', [...Array.from({ length: 48 }, (_, i) => 40 + (i % 3)), 900], newest)
  await sweep(app.sql, now, OPTS)
  const [{ n }] = await app.sql<
    { n: number }[]
  >`select count(*)::int as n from anomalies a join stats s on s.id = a.stat_id where s.account_id = ${u.accountId} and a.status = 'open'`
  t.is(n, 1, 'the incident is open')
  const created = await request(app.url, '/api/v1/alerts', {
    bearer: u.key,
    json: { stat_name: 'queue.depth', condition_type: 'anomaly', channel: 'webhook', channel_config: { webhook_url: receiver.url } },
  })
  t.is(created.status, 201)
  // Several evaluation passes (1 s apart) go by.
  await new Promise((r) => setTimeout(r, 3_500))
  const [row] = await app.sql<
    { state: string; last_evaluated_at: Date | null }[]
  >`select state, last_evaluated_at from alerts where id = ${created.body.alert.id}`
  t.truthy(row.last_evaluated_at, 'evaluated')
  t.is(row.state, 'ok')
  t.deepEqual(receiver.requests, [])
})

test.serial(
  'anomaly alerts: refused on a plan without detection (403 naming the plan), a threshold is required of the others; nothing stored',
  async (t) => {
    const free = await user('free')
    const body = {
      stat_name: 'x',
      condition_type: 'anomaly',
      channel: 'webhook',
      channel_config: { webhook_url: 'http://127.0.0.1:9/hook' },
    }
    const refused = await request(app.url, '/api/v1/alerts', { bearer: free.key, json: body })
    t.is(refused.status, 403)
    t.like(refused.body, { code: 'plan_lacks_anomaly_detection' })
    t.regex(refused.body.detail, /^the free plan does not include anomaly detection/)
    const pro = await user('pro')
    const missing = await request(app.url, '/api/v1/alerts', { bearer: pro.key, json: { ...body, condition_type: 'above' } })
    t.is(missing.status, 400)
    t.like(missing.body, { code: 'validation_failed' })
    t.regex(missing.body.detail, /threshold: is required/)
    const misplaced = await request(app.url, '/api/v1/alerts', {
      bearer: pro.key,
      json: { ...body, condition_type: 'above', threshold: 1, anomaly_sensitivity: 'low' },
    })
    t.is(misplaced.status, 400)
    t.like(misplaced.body, { code: 'validation_failed', detail: 'body.anomaly_sensitivity: applies to anomaly alerts only, not above' })
    const unknown = await request(app.url, '/api/v1/alerts', { bearer: pro.key, json: { ...body, anomaly_sensitivity: 'max' } })
    t.is(unknown.status, 400)
    t.like(unknown.body, { code: 'validation_failed', detail: 'body.anomaly_sensitivity: must be one of low, normal, high' })
    const [{ n }] = await app.sql<
      { n: number }[]
    >`select count(*)::int as n from alerts where account_id = any(${[free.accountId, pro.accountId]}::uuid[])`
    t.is(n, 0)
  },
)

test.serial("an anomaly alert's message states the incident's hour on the account's clock", async (t) => {
  const u = await user('pro')
  await app.sql`update accounts set time_zone = 'Europe/Kyiv' where id = ${u.accountId}`
  const receiver = await startHttpReceiver()
  t.teardown(() => receiver.close())
  const created = await request(app.url, '/api/v1/alerts', {
    bearer: u.key,
    json: { stat_name: 'zoned.latency', condition_type: 'anomaly', channel: 'webhook', channel_config: { webhook_url: receiver.url } },
  })
  t.is(created.status, 201, created.text)
  const now = new Date()
  const newest = newestCompleteHour(now)
  const steady = Array.from({ length: 48 }, (_, i) => 120 * (1 + 0.05 * Math.sin(i * 1.7)))
  await write(u.key, 'zoned.latency', [...steady, 2400], newest - 2 * HOUR)
  await sweep(app.sql, new Date(now.getTime() - 2 * HOUR * 1000), OPTS)
  const [fired] = await receiver.waitFor(1, (r) => r.json?.event === 'fired' && r.json?.stat_name === 'zoned.latency')
  const hour = newest - 2 * HOUR
  const local = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Kyiv', hourCycle: 'h23', hour: '2-digit', minute: '2-digit' }).format(
    hour * 1000,
  )
  t.notRegex(fired.json.message, /UTC/, fired.json.message)
  t.regex(fired.json.message, new RegExp(` ${local}-\\d{2}:\\d{2} (EET|EEST|GMT\\+[23]): `), fired.json.message)
})
