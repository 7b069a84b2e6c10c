// On-call channels (docs/decisions.md §23): an alert fires and resolves through PagerDuty (Events API v2,
// dedup_key = incident key) and Opsgenie (create and close by alias), against local servers speaking each
// protocol; a retry after a lost answer lands on the same alert there, and the resolve closes it.
import test from 'ava'
import { evaluateAlerts } from '../../shared/alerts/evaluate.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startOpsgenie, startPagerDuty, type OnCallServer } from '../helpers/oncall.js'
import { eventually } from '../helpers/receivers.js'
import { settle } from '../helpers/storage.js'

const ROUTING_KEY = 'R0UTINGKEY0123456789abcdefABCDEF'
const GENIE_KEY = 'genie-0123456789'
let app: TestApp
let pd: OnCallServer
let og: OnCallServer
test.before(async () => {
  ;[pd, og] = await Promise.all([startPagerDuty(ROUTING_KEY), startOpsgenie(GENIE_KEY)])
  app = await startTestApp({ ALERT_EVAL_INTERVAL_SECONDS: '3600' })
  await app.startWorkers()
})
test.after.always(async () => {
  await app?.close()
  await pd?.close()
  await og?.close()
})

async function gauge(key: string, stat: string, value: number) {
  const res = await request(app.url, `/api/v1/stats/${encodeURIComponent(stat)}/value`, { json: { value }, bearer: key })
  if (res.status !== 200) throw new Error(`write failed: ${res.status} ${res.text}`)
  await settle(app)
  await eventually(async () => {
    const [row] = await app.sql`select (select count(*) from rollup_pending rp where rp.stat_id = s.id)::int as pending, rs.refreshed_at
      from stats s left join rollup_state rs on rs.stat_id = s.id where s.name = ${stat}`
    return row && row.pending === 0 && row.refreshed_at
  }, `the reading of ${stat} folded`)
}

/** One evaluation pass at `at`, its deliveries queued as the evaluation job queues them. */
async function evaluate(at: Date) {
  const pass = await eventually(async () => {
    const p = await evaluateAlerts(app.sql, at)
    return p.skipped ? null : p
  }, 'an evaluation pass')
  for (const id of pass.deliveries) await app.api.deps.queues.enqueue('deliver-alert', { delivery_id: id }, { jobId: id })
}

const delivered = (alertId: string, n: number) =>
  eventually(
    async () => {
      const rows = await app.sql<{ event: string; status: string; payload: any }[]>`
      select event, status, payload from alert_deliveries where alert_id = ${alertId} order by created_at, event desc`
      return rows.length >= n && rows.every((r) => r.status === 'delivered') ? rows : null
    },
    `${n} deliveries delivered`,
    60_000,
  )

for (const tool of ['pagerduty', 'opsgenie'] as const) {
  test.serial(`${tool}: fire and resolve pair up by the incident key; a retry after a lost answer is the same alert there`, async (t) => {
    t.timeout(120_000) // a retry waits the delivery backoff (5 s and up)
    const server = tool === 'pagerduty' ? pd : og
    const u = await signUp(app.url)
    const { key } = await createKey(app.url, u)
    const stat = `queue ${tool}`
    const channel_config =
      tool === 'pagerduty'
        ? { pagerduty_routing_key: ROUTING_KEY, pagerduty_url: pd.url }
        : { opsgenie_api_key: GENIE_KEY, opsgenie_url: og.url }
    const created = await request(app.url, '/api/v1/alerts', {
      json: { stat_name: stat, condition_type: 'above', threshold: 90, window_minutes: 5, channel: tool, channel_config },
      bearer: key,
    })
    t.is(created.status, 201, created.text)
    const id = created.body.alert.id
    const before = server.requests.length
    server.loseNext(1)
    await gauge(key, stat, 95)
    await evaluate(new Date(Date.now() + 1000))
    const [fired] = await delivered(id, 1)
    const incident = fired.payload.incident_key as string
    const sent = server.requests.slice(before)
    t.is(sent.length, 2, 'the lost answer was retried once')
    t.deepEqual(
      sent.map((r) => r.status),
      [503, 202],
    )
    t.deepEqual(server.alerts.get(incident), { key: incident, open: true, count: 2, opened: 1, closed: 0 }, 'one alert, counted twice')
    if (tool === 'pagerduty') {
      t.like(sent[1].json, { routing_key: ROUTING_KEY, event_action: 'trigger', dedup_key: incident, payload: { severity: 'critical' } })
    } else {
      t.is(sent[1].headers.authorization, `GenieKey ${GENIE_KEY}`)
      t.like(sent[1].json, { alias: incident, source: 'metrics' })
    }

    await gauge(key, stat, 10)
    await evaluate(new Date(Date.now() + 2000))
    const [, resolved] = await delivered(id, 2)
    t.is(resolved.event, 'resolved')
    t.is(resolved.payload.incident_key, incident)
    t.deepEqual(server.alerts.get(incident), { key: incident, open: false, count: 2, opened: 1, closed: 1 })
    const last = server.requests.at(-1)!
    if (tool === 'pagerduty') t.deepEqual(last.json, { routing_key: ROUTING_KEY, dedup_key: incident, event_action: 'resolve' })
    else t.is(last.path, `/v2/alerts/${encodeURIComponent(incident)}/close?identifierType=alias`)
    // The audit row of the alert's creation keeps no key of the tool.
    const rows = JSON.stringify(await app.sql`select summary from audit_events where account_id = ${u.accountId}`)
    t.false(rows.includes(tool === 'pagerduty' ? ROUTING_KEY : GENIE_KEY))
  })
}

test('on-call channels: a missing key, or a field of another channel, is refused; nothing stored', async (t) => {
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  const base = { stat_name: 'x', condition_type: 'above', threshold: 1, window_minutes: 5 }
  const missing = await request(app.url, '/api/v1/alerts', { json: { ...base, channel: 'pagerduty', channel_config: {} }, bearer: key })
  t.is(missing.status, 400)
  t.regex(missing.body.detail, /pagerduty_routing_key: required for channel pagerduty/)
  const other = await request(app.url, '/api/v1/alerts', {
    json: { ...base, channel: 'opsgenie', channel_config: { opsgenie_api_key: GENIE_KEY, webhook_url: 'http://127.0.0.1:9' } },
    bearer: key,
  })
  t.is(other.status, 400)
  t.regex(other.body.detail, /webhook_url: not used by channel opsgenie/)
  const [n] = await app.sql`select count(*)::int as n from alerts where account_id = ${u.accountId}`
  t.is(n.n, 0)
})
