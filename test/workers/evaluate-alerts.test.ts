import test from 'ava'
import { randomUUID } from 'node:crypto'
import { evaluateAlerts } from '../../shared/alerts/evaluate.js'
import { insertAlert } from '../../shared/alerts/repo.js'
import { CreateAlertBody } from '../../shared/alerts/schema.js'
import { applyBatch } from '../../shared/points/repo.js'
import { appSuite } from '../helpers/suite.js'
import { signUp } from '../helpers/factories.js'

const app = appSuite()

const NOW = Math.floor(Date.now() / 1000)
const at = (s: number) => new Date((NOW + s) * 1000)

async function setup(kind: 'counter' | 'gauge', alert: Record<string, unknown>) {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'pro' where id = ${user.accountId}`
  const [stat] = await app.sql<
    { id: string }[]
  >`insert into stats (account_id, name, kind) values (${user.accountId}, 'cpu', ${kind}) returning id`
  const body = CreateAlertBody.parse({
    stat_name: 'cpu',
    channel: 'webhook',
    channel_config: { webhook_url: 'http://127.0.0.1:9/hook' },
    ...alert,
  })
  const row = await insertAlert(app.sql, user.accountId, body, 'ok', 100)
  const write = (s: number, value: number) => applyBatch(app.sql, randomUUID(), [[stat.id, NOW + s, value, null]])
  const deliveries = async () =>
    app.sql<
      { event: string; payload: any }[]
    >`select event, payload from alert_deliveries where alert_id = ${row!.id} order by created_at, event desc`
  return { alert: row!, write, deliveries }
}

test.serial('3.2 above on a gauge: fire once on the transition, nothing while it lasts, resolve with the same incident', async (t) => {
  const { write, deliveries, alert } = await setup('gauge', { condition_type: 'above', threshold: 90 })
  await write(-30, 95)
  await evaluateAlerts(app.sql, at(0))
  await evaluateAlerts(app.sql, at(15))
  await write(20, 80) // the last minute's average is now 87.5
  await evaluateAlerts(app.sql, at(25))
  const d = await deliveries()
  t.deepEqual(
    d.map((x) => x.event),
    ['fired', 'resolved'],
  )
  const [fired, resolved] = d.map((x) => x.payload)
  t.like(fired, {
    alert_id: alert.id,
    event: 'fired',
    status: 'firing',
    stat_name: 'cpu',
    observed_value: 95,
    condition: 'above',
    threshold: 90,
    triggered_at: at(0).toISOString(),
  })
  t.like(resolved, { event: 'resolved', status: 'resolved', observed_value: 87.5 })
  t.is(fired.incident_key, resolved.incident_key)
  t.not(fired.idempotency_key, resolved.idempotency_key)
  const [row] = await app.sql`select state, last_value from alerts where id = ${alert.id}`
  t.deepEqual({ ...row }, { state: 'ok', last_value: 87.5 })
})

test.serial('3.2 counters are summed over the last minute; exactly at the threshold does not fire', async (t) => {
  const { write, deliveries } = await setup('counter', { condition_type: 'above', threshold: 10 })
  await write(-50, 4)
  await write(-10, 6)
  await evaluateAlerts(app.sql, at(0))
  t.is((await deliveries()).length, 0, '4 + 6 = 10 is exactly the threshold')
  await write(-5, 1)
  await evaluateAlerts(app.sql, at(1))
  t.deepEqual(
    (await deliveries()).map((d) => d.payload.observed_value),
    [11],
  )
})

test.serial('2.4 heartbeat with no data at all fires once the window has passed since the alert was made', async (t) => {
  const user = await signUp(app.url)
  const body = CreateAlertBody.parse({
    stat_name: 'never.written',
    condition_type: 'heartbeat',
    threshold: 0,
    window_minutes: 5,
    channel: 'webhook',
    channel_config: { webhook_url: 'http://127.0.0.1:9/' },
  })
  const alert = (await insertAlert(app.sql, user.accountId, body, 'ok', 10))!
  await evaluateAlerts(app.sql, new Date(alert.created_at.getTime() + 299_000))
  await evaluateAlerts(app.sql, new Date(alert.created_at.getTime() + 301_000))
  const d = await app.sql`select event, payload from alert_deliveries where alert_id = ${alert.id}`
  t.is(d.length, 1)
  t.is(d[0].event, 'fired')
  t.true(d[0].payload.observed_value > 300)
})

test.serial('missing_data: fires when the last point is older than the window, resolves when data comes back', async (t) => {
  const { write, deliveries } = await setup('gauge', { condition_type: 'missing_data', threshold: 0, window_minutes: 2 })
  await write(-200, 1)
  await evaluateAlerts(app.sql, at(0))
  await write(5, 1)
  await evaluateAlerts(app.sql, at(10))
  t.deepEqual(
    (await deliveries()).map((d) => d.event),
    ['fired', 'resolved'],
  )
})

test.serial('pct_change compares the last minute with the minute window_minutes ago', async (t) => {
  const { write, deliveries } = await setup('counter', { condition_type: 'pct_change', threshold: 100, window_minutes: 10 })
  await write(-600 - 30, 10) // ten minutes ago: 10 per minute
  await write(-30, 25) // now: 25 per minute, +150 %
  await evaluateAlerts(app.sql, at(0))
  t.deepEqual(
    (await deliveries()).map((d) => d.event),
    ['fired'],
  )
})

test.serial('3.2 cooldown: a repeat breach within the cooldown is not sent, and its recovery is silent', async (t) => {
  const { write, deliveries } = await setup('gauge', { condition_type: 'above', threshold: 50, cooldown_minutes: 30 })
  await write(0, 60)
  await evaluateAlerts(app.sql, at(1))
  await write(61, 10)
  await evaluateAlerts(app.sql, at(62))
  await write(123, 70)
  await evaluateAlerts(app.sql, at(124))
  await write(185, 10)
  await evaluateAlerts(app.sql, at(186))
  t.deepEqual(
    (await deliveries()).map((d) => d.event),
    ['fired', 'resolved'],
  )
})

test.serial('two evaluation passes at once never fire twice (advisory lock)', async (t) => {
  const { write, deliveries } = await setup('gauge', { condition_type: 'below', threshold: 5 })
  await write(-5, 1)
  const passes = await Promise.all([evaluateAlerts(app.sql, at(0)), evaluateAlerts(app.sql, at(0)), evaluateAlerts(app.sql, at(0))])
  t.true(passes.some((p) => p.skipped) || passes.filter((p) => p.deliveries.length).length === 1)
  t.deepEqual(
    (await deliveries()).map((d) => d.event),
    ['fired'],
  )
})

test.serial('alerts waiting for e-mail confirmation are not evaluated', async (t) => {
  const user = await signUp(app.url)
  const body = CreateAlertBody.parse({
    stat_name: 'x',
    condition_type: 'heartbeat',
    threshold: 0,
    window_minutes: 1,
    channel: 'email',
    channel_config: { email: 'a@example.com' },
  })
  const alert = (await insertAlert(app.sql, user.accountId, body, 'pending_confirmation', 10))!
  await evaluateAlerts(app.sql, new Date(Date.now() + 3600_000))
  const [row] = await app.sql`select state, last_evaluated_at from alerts where id = ${alert.id}`
  t.deepEqual({ ...row }, { state: 'pending_confirmation', last_evaluated_at: null })
})
