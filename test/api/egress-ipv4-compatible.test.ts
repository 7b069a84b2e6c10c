// IPv4-compatible IPv6 addresses (::/96, `[::127.0.0.1]` written `[::7f00:1]` by the URL
// parser) are not public targets: refused when a webhook or Slack alert is created, and again when a
// delivery is about to connect (an alert stored before the rule, or through a permissive process).
import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { eventually } from '../helpers/receivers.js'
import { settle } from '../helpers/storage.js'

// Workers and API refuse private targets; the evaluation runs every second.
const app = appSuite({ workers: true, env: { ALERT_EVAL_INTERVAL_SECONDS: '1', WEBHOOK_ALLOW_PRIVATE: '0' } })

const TARGETS = ['http://[::127.0.0.1]:9/x', 'http://[::10.0.0.1]/', 'http://[::a9fe:a9fe]/', 'http://[0:0:0:0:0:0:8.8.8.8]/']

test('at create: webhook and Slack targets in ::/96 are 400 webhook_refused naming the range; no alert stored', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  for (const url of TARGETS) {
    for (const channel of ['webhook', 'slack'] as const) {
      const res = await request(app.url, '/api/v1/alerts', {
        json: {
          stat_name: 's',
          condition_type: 'above',
          threshold: 1,
          channel,
          channel_config: channel === 'slack' ? { slack_webhook_url: url } : { webhook_url: url },
        },
        bearer: key,
      })
      t.is(res.status, 400, `${channel} ${url}: ${res.text}`)
      t.is(res.body.code, 'webhook_refused')
      t.regex(res.body.detail, /resolves to ::[0-9a-f:]+, a ipv4Compatible address, not a public one/, url)
    }
  }
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from alerts where account_id = ${user.accountId}`
  t.is(n, 0, 'nothing stored')
})

test('at connect: an alert to [::127.0.0.1] stored through a permissive process is refused at delivery, before any connection', async (t) => {
  t.timeout(90_000)
  const permissive = await app.another({ WEBHOOK_ALLOW_PRIVATE: '1' })
  const user = await signUp(permissive.url)
  const { key } = await createKey(permissive.url, user)
  const created = await request(permissive.url, '/api/v1/alerts', {
    json: {
      stat_name: 'load',
      condition_type: 'above',
      threshold: 1,
      window_minutes: 1,
      channel: 'webhook',
      channel_config: { webhook_url: 'http://[::127.0.0.1]:9/x' },
      cooldown_minutes: 0,
    },
    bearer: key,
  })
  t.is(created.status, 201, created.text)
  t.is((await request(permissive.url, '/api/v1/stats/load/value', { json: { value: 100 }, bearer: key })).status, 200)
  await settle(app)
  const row = await eventually(
    async () => {
      const [r] = await app.sql<{ attempts: number; status: string; last_error: string | null }[]>`
      select attempts, status, last_error from alert_deliveries where alert_id = ${created.body.alert.id}`
      return r && r.attempts >= 1 ? r : null
    },
    'a refused delivery attempt',
    60_000,
  )
  t.regex(row.last_error ?? '', /::7f00:1, a ipv4Compatible address, not a public one/)
  t.is((await request(permissive.url, `/api/v1/alerts/${created.body.alert.id}`, { method: 'DELETE', bearer: key })).status, 204)
})
