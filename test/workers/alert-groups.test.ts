// Alerts per group (docs/decisions.md §24): an alert with group_by judges each value of the tag on its own, over
// the series its filter keeps. Points go through the HTTP write route and the ingest workers into PostgreSQL;
// the evaluation pass runs at chosen instants.
import test from 'ava'
import { evaluateAlerts } from '../../shared/alerts/evaluate.js'
import { insertAlert } from '../../shared/alerts/repo.js'
import { CreateAlertBody } from '../../shared/alerts/schema.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'
import { appSuite } from '../helpers/suite.js'

const app = appSuite({ workers: true })

async function setup(alert: Record<string, unknown>) {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'pro' where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  const body = CreateAlertBody.parse({
    stat_name: 'cpu',
    channel: 'webhook',
    channel_config: { webhook_url: 'http://127.0.0.1:9/hook' },
    condition_type: 'above',
    threshold: 90,
    ...alert,
  })
  const row = (await insertAlert(app.sql, user.accountId, body, 'ok', 100))!
  const write = async (t: number, value: number, tags: Record<string, string>) => {
    const res = await request(app.url, '/api/v1/stats/cpu/value', { json: { value, t, tags }, bearer: key })
    if (res.status !== 200) throw new Error(res.text)
  }
  const deliveries = () =>
    app.sql<{ event: string; payload: any }[]>`
      select event, payload from alert_deliveries where alert_id = ${row.id} order by created_at, event desc`
  return { alert: row, key, write, deliveries }
}

test.serial('a group alert fires for the one host over the line, not the others, and resolves on its own', async (t) => {
  const { alert, key, write, deliveries } = await setup({ group_by: 'host' })
  const now = Math.floor(Date.now() / 1000)
  await write(now - 30, 95, { host: 'web1', region: 'eu' })
  await write(now - 30, 50, { host: 'web2', region: 'eu' })
  await write(now - 30, 60, { host: 'web3', region: 'us' })
  await settle(app)
  await evaluateAlerts(app.sql, new Date(now * 1000))
  let d = await deliveries()
  t.deepEqual(
    d.map((x) => [x.event, x.payload.tags]),
    [['fired', { host: 'web1' }]],
    'web1 alone fires',
  )
  const [fired] = d.map((x) => x.payload)
  t.like(fired, { stat_name: 'cpu', observed_value: 95, condition: 'above', threshold: 90, status: 'firing' })
  t.regex(fired.message, /^cpu\{host=web1\}: above 90 \(observed 95\)$/)
  t.regex(fired.incident_key, new RegExp(`^${alert.id}\\.host=web1\\.`))

  // A new host crossing the line fires for that host only; web1 is still over, so nothing more for it.
  await write(now + 30, 99, { host: 'web4', region: 'us' })
  await write(now + 30, 97, { host: 'web1', region: 'eu' })
  await settle(app)
  await evaluateAlerts(app.sql, new Date((now + 40) * 1000))
  d = await deliveries()
  t.deepEqual(
    d.map((x) => [x.event, x.payload.tags.host]),
    [
      ['fired', 'web1'],
      ['fired', 'web4'],
    ],
  )
  t.not(d[0].payload.incident_key, d[1].payload.incident_key)

  // web1 drops below the line: it resolves, web4 keeps firing.
  await write(now + 90, 10, { host: 'web1', region: 'eu' })
  await write(now + 90, 99, { host: 'web4', region: 'us' })
  await settle(app)
  await evaluateAlerts(app.sql, new Date((now + 100) * 1000))
  d = await deliveries()
  t.deepEqual(
    d.map((x) => [x.event, x.payload.tags.host]),
    [
      ['fired', 'web1'],
      ['fired', 'web4'],
      ['resolved', 'web1'],
    ],
  )
  t.is(d[2].payload.incident_key, d[0].payload.incident_key, 'the resolve closes the same incident')

  const page = await request(app.url, `/api/v1/alerts/${alert.id}`, { bearer: key })
  t.is(page.status, 200, page.text)
  t.is(page.body.alert.group_by, 'host')
  t.is(page.body.alert.state, 'firing')
  t.deepEqual(
    page.body.alert.groups.map((g: any) => [g.tags.host, g.state]),
    [
      ['web1', 'ok'],
      ['web2', 'ok'],
      ['web3', 'ok'],
      ['web4', 'firing'],
    ],
  )
})

test.serial('a filter keeps only the matching series: a group alert on region eu never fires for a us host', async (t) => {
  const { write, deliveries } = await setup({ group_by: 'host', filter: 'region:eu' })
  const now = Math.floor(Date.now() / 1000)
  await write(now - 30, 99, { host: 'web3', region: 'us' })
  await write(now - 30, 91, { host: 'web2', region: 'eu' })
  await settle(app)
  await evaluateAlerts(app.sql, new Date(now * 1000))
  t.deepEqual(
    (await deliveries()).map((x) => [x.event, x.payload.tags]),
    [['fired', { host: 'web2' }]],
  )
})

test('group_by takes above, below and sustained on the last minute only; a bad filter is refused; 400, nothing stored', async (t) => {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'pro' where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  const base = { stat_name: 'cpu', channel: 'webhook', channel_config: { webhook_url: 'http://127.0.0.1:9/hook' } }
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [
      { condition_type: 'pct_change', threshold: 5, group_by: 'host' },
      /group_by: applies to above, below, sustained with aggregation avg and on_no_data keep/,
    ],
    [{ condition_type: 'above', threshold: 5, group_by: 'host', on_no_data: 'alert' }, /group_by: applies to above/],
    [{ condition_type: 'above', threshold: 5, group_by: 'Host' }, /group_by: must be one tag key/],
    [{ condition_type: 'above', threshold: 5, filter: 'host' }, /filter: invalid filter "host"/],
  ]
  for (const [extra, detail] of cases) {
    const res = await request(app.url, '/api/v1/alerts', { json: { ...base, ...extra }, bearer: key })
    t.is(res.status, 400, res.text)
    t.regex(String(res.body.detail), detail)
  }
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from alerts where account_id = ${user.accountId}`
  t.is(n, 0, 'no alert stored')
})
