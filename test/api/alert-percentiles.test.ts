// Alerts on a percentile of a gauge (docs/decisions.md §20) on real PostgreSQL and Redis through a
// listening server: an alert on p95 fires while the average stays below its threshold (and an avg alert on the
// same stat does not), and resolves when the tail is gone; a window of hours reads hour sketches within 1 % of the
// exact nearest-rank value; the refusals (a counter, a condition that takes no percentile, an unknown percentile,
// a change of aggregation) are 400s that store nothing. Evaluation passes run at instants the test picks (the
// schedule is set an hour apart), so the tests run one at a time.
import test from 'ava'
import { evaluateAlerts } from '../../shared/alerts/evaluate.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { eventually, startHttpReceiver, type HttpReceiver } from '../helpers/receivers.js'
import { settle } from '../helpers/storage.js'

let receiver: HttpReceiver
test.before(async () => {
  receiver = await startHttpReceiver()
})
const app = appSuite({ workers: true, env: { ALERT_EVAL_INTERVAL_SECONDS: '3600' } })
test.serial.after.always(() => receiver?.close())

async function user() {
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  await app.sql`update accounts set plan = 'pro' where id = ${u.accountId}`
  return { ...u, key }
}

const body = (over: Record<string, unknown>) => ({
  condition_type: 'above',
  threshold: 500,
  window_minutes: 5,
  channel: 'webhook',
  channel_config: { webhook_url: receiver.url },
  ...over,
})

async function createAlert(key: string, over: Record<string, unknown>) {
  const res = await request(app.url, '/api/v1/alerts', { json: body(over), bearer: key })
  if (res.status !== 201) throw new Error(`alert creation failed: ${res.status} ${res.text}`)
  return res.body.alert as { id: string; aggregation: string }
}

async function write(key: string, points: Array<{ stat: string; t: number; value?: number; count?: number }>) {
  for (let i = 0; i < points.length; i += 1000) {
    const res = await request(app.url, '/api/v1/points', { bearer: key, json: { points: points.slice(i, i + 1000) } })
    if (res.status !== 200) throw new Error(`write failed: ${res.status} ${res.text}`)
  }
  await settle(app)
}

async function evaluate(at: Date) {
  await eventually(async () => !(await evaluateAlerts(app.sql, at)).skipped, 'an evaluation pass')
}

const alertRow = async (id: string) =>
  (await app.sql<{ state: string; last_value: number | null }[]>`select state, last_value from alerts where id = ${id}`)[0]
const deliveries = async (id: string) => [
  ...(await app.sql<
    { event: string; payload: any }[]
  >`select event, payload from alert_deliveries where alert_id = ${id} order by created_at`),
]

/** Nearest rank: the value of rank ceil(q·n) (at least 1) in ascending order. */
function nearestRank(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(1, Math.ceil(q * sorted.length - 1e-9)) - 1]
}

test.serial(
  'p95 alert fires on the tail while the average stays below the threshold; an avg alert on the same stat does not; it resolves when the tail is gone',
  async (t) => {
    const u = await user()
    const stat = 'api.latency'
    // Every 3 s over the last 10 minutes: 100 ms, with one reading in ten at 2,000 ms in the first five minutes.
    const T = Math.floor(Date.now() / 1000)
    const points = Array.from({ length: 200 }, (_, i) => {
      const ts = T - 600 + i * 3
      return { stat, t: ts, value: ts < T - 300 && i % 10 === 0 ? 2000 : 100 }
    })
    await write(u.key, points)
    const p95 = await createAlert(u.key, { stat_name: stat, aggregation: 'p95' })
    const avg = await createAlert(u.key, { stat_name: stat })
    t.is(p95.aggregation, 'p95')
    t.is(avg.aggregation, 'avg')

    // At T-300 the window [T-600, T-300) holds the spikes: its p95 is 2,000, its average 290 (the last minute's too).
    const first = points.filter((p) => p.t >= T - 600 && p.t < T - 300).map((p) => p.value)
    const mean = first.reduce((a, b) => a + b, 0) / first.length
    t.true(mean < 500, `the window's average ${mean} is under the threshold`)
    t.is(nearestRank(first, 0.95), 2000)
    await evaluate(new Date((T - 300) * 1000))
    t.like(await alertRow(p95.id), { state: 'firing', last_value: 2000 })
    const avgRow = await alertRow(avg.id)
    t.is(avgRow.state, 'ok')
    t.true(avgRow.last_value! < 500, `avg alert saw ${avgRow.last_value}`)
    const fired = await deliveries(p95.id)
    t.is(fired.length, 1)
    t.is(fired[0].event, 'fired')
    t.is(fired[0].payload.observed_value, 2000)
    t.is(fired[0].payload.message, 'api.latency: p95 over 5 min above 500 (observed 2000)')
    t.deepEqual(await deliveries(avg.id), [])

    // The API shows what the alert compares: in the list and alone.
    const one = await request(app.url, `/api/v1/alerts/${p95.id}`, { bearer: u.key })
    t.like(one.body.alert, { aggregation: 'p95', state: 'firing', last_value: 2000, window_minutes: 5 })
    const list = await request(app.url, '/api/v1/alerts', { bearer: u.key })
    t.deepEqual(list.body.alerts.map((a: any) => a.aggregation).sort(), ['avg', 'p95'])

    // At T the window [T-300, T) holds no spike: p95 is 100, the alert resolves.
    await evaluate(new Date(T * 1000))
    t.like(await alertRow(p95.id), { state: 'ok', last_value: 100 })
    const all = await deliveries(p95.id)
    t.deepEqual(
      all.map((d) => d.event),
      ['fired', 'resolved'],
    )
    t.is(all[1].payload.message, 'api.latency: recovered, p95 over 5 min no longer above 500 (observed 100)')
  },
)

test.serial('a window of hours reads hour sketches merged with the raw points of its partial hours, within 1 % of exact', async (t) => {
  const u = await user()
  const stat = 'queue.wait'
  const T = Math.floor(Date.now() / 1000)
  // Four hours of log-normal-ish readings every 20 s (a seeded generator, so a failure replays).
  let s = 7
  const uniform = () => (s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
  const points = Array.from({ length: 720 }, (_, i) => ({
    stat,
    t: T - 4 * 3600 + i * 20,
    value: Math.round(Math.exp(3 + 1.2 * (uniform() + uniform() + uniform() - 1.5)) * 1000) / 1000,
  }))
  await write(u.key, points)
  await refreshRollups(app.sql)
  const [{ hours }] = await app.sql<{ hours: number }[]>`
    select count(*)::int as hours from sketches_1h h join stats st on st.id = h.stat_id where st.account_id = ${u.accountId} and st.name = ${stat}`
  t.true(hours >= 3, `hour sketches built (${hours})`)

  for (const [aggregation, q] of [
    ['p50', 0.5],
    ['p90', 0.9],
    ['p99', 0.99],
  ] as const) {
    const a = await createAlert(u.key, { stat_name: stat, aggregation, window_minutes: 150, threshold: 1e9 })
    await evaluate(new Date(T * 1000))
    const exact = nearestRank(
      points.filter((p) => p.t >= T - 150 * 60 && p.t < T).map((p) => p.value),
      q,
    )
    const row = await alertRow(a.id)
    t.is(row.state, 'ok')
    t.true(Math.abs(row.last_value! - exact) / exact <= 0.01 + 1e-12, `${aggregation}: ${row.last_value} vs exact ${exact}`)
  }
})

test.serial(
  'refusals: a counter, a condition that takes no percentile, an unknown percentile, a change of aggregation: 400, nothing stored',
  async (t) => {
    const u = await user()
    const T = Math.floor(Date.now() / 1000)
    await write(u.key, [
      { stat: 'hits', t: T, count: 3 },
      { stat: 'cpu', t: T, value: 50 },
    ])
    const count = async () => (await app.sql<{ n: number }[]>`select count(*)::int as n from alerts where account_id = ${u.accountId}`)[0].n

    const counter = await request(app.url, '/api/v1/alerts', { json: body({ stat_name: 'hits', aggregation: 'p95' }), bearer: u.key })
    t.is(counter.status, 400, counter.text)
    t.is(counter.body.code, 'percentile_on_counter')
    t.is(
      counter.body.detail,
      'aggregation p95: "hits" is a counter, and only gauges have percentiles (a counter\'s minute is a sum): use aggregation avg',
    )

    for (const condition of ['pct_change', 'heartbeat', 'missing_data', 'anomaly']) {
      const res = await request(app.url, '/api/v1/alerts', {
        json: body({ stat_name: 'cpu', condition_type: condition, aggregation: 'p99' }),
        bearer: u.key,
      })
      t.is(res.status, 400, `${condition}: ${res.text}`)
      t.is(res.body.code, 'validation_failed')
      t.is(res.body.detail, `body.aggregation: p99 applies to above, below, sustained only, not ${condition}`)
    }
    for (const aggregation of ['p42', 'max', 'P95', 95]) {
      const res = await request(app.url, '/api/v1/alerts', { json: body({ stat_name: 'cpu', aggregation }), bearer: u.key })
      t.is(res.status, 400, `${aggregation}: ${res.text}`)
      t.true(String(res.body.detail).startsWith('body.aggregation'), res.body.detail)
    }
    t.is(await count(), 0)

    const a = await createAlert(u.key, { stat_name: 'cpu', aggregation: 'p90' })
    const change = await request(app.url, `/api/v1/alerts/${a.id}`, { method: 'PATCH', json: { aggregation: 'p99' }, bearer: u.key })
    t.is(change.status, 400, change.text)
    t.is((await app.sql`select aggregation from alerts where id = ${a.id}`)[0].aggregation, 'p90')
    t.is(await count(), 1)
  },
)

test.serial(
  'a stat that turns out a counter after its percentile alert was created gives the alert no value: it stays as it is',
  async (t) => {
    const u = await user()
    const a = await createAlert(u.key, { stat_name: 'later', aggregation: 'p95', threshold: 0 })
    const T = Math.floor(Date.now() / 1000)
    await write(u.key, [{ stat: 'later', t: T - 30, count: 5 }])
    await evaluate(new Date(T * 1000))
    t.like(await alertRow(a.id), { state: 'ok', last_value: null })
    t.deepEqual(await deliveries(a.id), [])
  },
)

test.serial(
  'threshold helper on a percentile: candidates from the minute p95s over the window, back-tested; a counter is a 400',
  async (t) => {
    const u = await user()
    const stat = 'checkout.latency'
    // Four hours, a reading every 10 s: 100 ms, with a burst of three readings at 800 ms each hour. The minute
    // averages never pass 450, the p95 over 5 minutes (30 readings, rank 29) is 800 while two of the burst are in it.
    const T = Math.floor(Date.now() / 60_000) * 60
    const points = Array.from({ length: 1440 }, (_, i) => ({ stat, t: T - 14_400 + i * 10, value: i % 360 < 3 ? 800 : 100 }))
    await write(u.key, [...points, { stat: 'orders', t: T - 60, count: 1 } as never])

    const get = (q: Record<string, string>) =>
      request(app.url, `/api/v1/thresholds/suggest?${new URLSearchParams({ stat, lookback: '24h', ...q })}`, { bearer: u.key })
    const avg = await get({})
    t.is(avg.status, 200, avg.text)
    t.is(avg.body.aggregation, 'avg')
    t.true(avg.body.distribution.max < 500, `minute averages stay under 500 (max ${avg.body.distribution.max})`)
    const backtested = await get({ aggregation: 'p95', window_minutes: '5', threshold: '500' })
    t.is(backtested.status, 200, backtested.text)
    t.like(backtested.body, { aggregation: 'p95', window_minutes: 5 })
    t.is(backtested.body.distribution.max, 800)
    t.regex(
      backtested.body.basis.value_definition,
      /^the p95 \(nearest rank\) of the gauge's points over the 5 minutes before the end of each minute/,
    )
    // Four bursts, each one incident: the p95 over 5 minutes holds above 500 while the burst is in the window.
    t.is(backtested.body.suggestions[0].would_have_fired, 4)
    const avgTest = await get({ threshold: '500' })
    t.is(avgTest.body.suggestions[0].would_have_fired, 0)
    const suggested = await get({ aggregation: 'p95', window_minutes: '5' })
    t.true(suggested.body.suggestions.length >= 1)
    t.true(
      suggested.body.suggestions.every((s: any) => s.threshold > 100 && s.threshold < 800),
      JSON.stringify(suggested.body.suggestions),
    )

    const counter = await request(app.url, '/api/v1/thresholds/suggest?stat=orders&aggregation=p95', { bearer: u.key })
    t.is(counter.status, 400, counter.text)
    t.is(counter.body.code, 'percentile_on_counter')
    t.is(
      counter.body.detail,
      'aggregation p95: "orders" is a counter, and only gauges have percentiles (a counter\'s minute is a sum): use aggregation avg',
    )
    const bad = await get({ aggregation: 'p97' })
    t.is(bad.status, 400)
    t.true(String(bad.body.detail).startsWith('query.aggregation'), bad.body.detail)
    const window = await get({ aggregation: 'p95', window_minutes: '0' })
    t.is(window.status, 400)
    t.true(String(window.body.detail).startsWith('query.window_minutes'), window.body.detail)
  },
)
