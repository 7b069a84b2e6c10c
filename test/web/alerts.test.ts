// Journey: alerts. The form's own checks, then one alert per channel kind
// (webhook, Slack, e-mail), the plan limit's refusal shown with its detail,
// a webhook alert that fires with its delivery listed, PagerDuty and Opsgenie
// alerts made through the form; and the two routes
// the page added (deliveries, usage) refusing what they must.
import test from 'ava'
import { screenshot, signedInTab, visible } from '../helpers/browser.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { settle } from '../helpers/storage.js'
import { startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from '../helpers/receivers.js'
import { startTestApp } from '../helpers/app.js'
import { webSuite } from '../helpers/suite.js'

let hook: HttpReceiver
let smtp: SmtpReceiver
test.before(async () => {
  ;[hook, smtp] = await Promise.all([startHttpReceiver(), startSmtpReceiver()])
})
test.after.always(async () => {
  await hook?.close()
  await smtp?.close()
})
const web = webSuite({ workers: true, env: () => ({ ALERT_EVAL_INTERVAL_SECONDS: '1', SMTP_URL: smtp.url }) })

test.serial('alerts: validation, one alert per channel, the plan limit, a fire and its delivery', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  t.is((await request(web.app.url, '/api/v1/stats/queue.depth/value', { json: { value: 1 }, bearer: key })).status, 200)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/alerts`)
  await page.getByText('No alerts yet.').waitFor()

  // The form's checks: nothing is sent, each error sits by its field, focus goes to the first.
  await page.getByRole('button', { name: 'Create alert' }).click()
  t.is(await page.locator('#stat_name-error').textContent(), 'Name the stat to watch.')
  t.is(await page.locator('#threshold-error').textContent(), 'Enter a number.')
  t.is(await page.locator('#target-error').textContent(), 'Required for this channel.')
  t.is(await page.evaluate(() => document.activeElement?.id), 'stat_name')
  await page.getByLabel('Stat', { exact: true }).fill('queue.depth')
  await page.getByLabel('Threshold').fill('5')
  await page.getByLabel('Webhook URL').fill('ftp://example.com/hook')
  await page.getByRole('button', { name: 'Create alert' }).click()
  t.is(await page.locator('#target-error').textContent(), 'Enter an http:// or https:// URL.')
  t.is((await web.app.sql`select 1 from alerts`).length, 0)
  await screenshot(page, 'alerts-validation')

  // Webhook, above 5.
  await page.getByLabel('Webhook URL').fill(hook.url)
  await page.getByRole('button', { name: 'Create alert' }).click()
  await page.getByText('Alert on “queue.depth” created').waitFor()
  t.regex((await page.getByTestId('signing-secret').textContent())!, /^whsec_/)

  // Slack, heartbeat: the threshold field goes away, the window explains itself.
  await page.getByLabel('Condition').selectOption('heartbeat')
  t.is(await page.getByLabel('Threshold').count(), 0)
  await page.getByLabel('Minutes without a point before it fires').fill('30')
  await page.getByRole('radio', { name: 'Slack' }).check()
  await page.getByLabel('Slack incoming-webhook URL').fill(`${hook.url}/slack`)
  await page.getByRole('button', { name: 'Create alert' }).click()
  await page.getByText('no heartbeat for 30 min').waitFor()

  // E-mail: the free plan's two alerts are used; the API's refusal is shown as it says it.
  await page.getByLabel('Condition').selectOption('below')
  await page.getByLabel('Threshold').fill('0')
  await page.getByRole('radio', { name: 'E-mail' }).check()
  await page.getByLabel('E-mail address').fill('ops@example.com')
  await page.getByRole('button', { name: 'Create alert' }).click()
  const refusal = page.locator('form .notice.error')
  await refusal.waitFor()
  t.is(await refusal.textContent(), 'plan limit reached: the free plan allows at most 2 alerts (403)')
  t.is((await web.app.sql`select 1 from alerts`).length, 2)

  await web.app.sql`update accounts set plan = 'starter' where id = ${user.accountId}`
  await page.getByRole('button', { name: 'Create alert' }).click()
  await page.getByText('check that inbox').waitFor()
  await page.locator('.badge.pending_confirmation').waitFor()
  t.is(smtp.mails.filter((m) => m.to.includes('ops@example.com')).length, 1)

  // The webhook alert fires: its badge turns and its delivery is listed.
  t.is((await request(web.app.url, '/api/v1/stats/queue.depth/value', { json: { value: 12 }, bearer: key })).status, 200)
  const webhookCard = page.locator('article', { hasText: 'value above 5' })
  await webhookCard.locator('.badge.firing').waitFor({ timeout: 20_000 })
  await hook.waitFor(1, (r) => r.path === '/hook')
  await webhookCard.getByText('Recent deliveries').click()
  await webhookCard.locator('.badge.delivered').waitFor()
  t.is(await webhookCard.locator('td[data-label="Event"]').first().textContent(), 'fired')
  await screenshot(page, 'alerts')
  t.deepEqual(
    problems.filter((p) => !p.includes('status of 403')),
    [],
    'nothing but the plan-limit refusal',
  )
})

test.serial(
  "suggest a threshold: candidates from the stat's history with how often each would have fired; Use fills the threshold",
  async (t) => {
    const user = await signUp(web.app.url)
    const { key } = await createKey(web.app.url, user)
    // One reading a minute for two hours: mostly 100, with four spikes to 500.
    const now = Math.floor(Date.now() / 60_000) * 60
    const points = Array.from({ length: 120 }, (_, i) => ({
      stat: 'api.latency',
      value: i % 30 === 7 ? 500 : 100,
      t: now - 7_200 + i * 60,
    }))
    t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
    await settle(web.app)
    await refreshRollups(web.app.sql)
    const { page, problems } = await signedInTab(web.browser, web.app.url, user)
    await page.goto(`${web.app.url}/alerts?stat=api.latency`)
    await page.getByRole('button', { name: 'Suggest a threshold' }).click()
    const table = page.locator('.suggest table')
    await table.waitFor()
    const rows = await table.locator('tbody tr').allTextContents()
    t.true(rows.length >= 1)
    // The largest candidate is one step inside the maximum (490, not 500, which `above` would never have fired
    // on): it would have fired on each of the four spikes and catches the largest minutes.
    t.false(
      rows.some((r) => r.startsWith('500')),
      JSON.stringify(rows),
    )
    const top = table.locator('tbody tr', { hasText: /^490/ })
    t.regex((await top.locator('td[data-label="Would have fired"]').textContent())!, /^4 times/)
    t.is(await top.locator('td[data-label="Catches the largest"]').textContent(), '3 of 3')
    t.regex((await page.locator('.suggest').textContent())!, /The largest minutes of the lookback: 500 \(/)
    await screenshot(page, 'alerts-suggest')
    await top.getByRole('button', { name: 'Use 490' }).click()
    t.is(await page.getByLabel('Threshold').inputValue(), '490')

    // An unknown stat: the API's detail, as it says it.
    await page.getByLabel('Stat', { exact: true }).fill('no.such.stat')
    await page.getByRole('button', { name: 'Suggest a threshold' }).click()
    const refusal = page.locator('.suggest .notice.error')
    await refusal.waitFor()
    t.regex((await refusal.textContent())!, /\(404\)$/)
    t.deepEqual(
      problems.filter((p) => !p.includes('status of 404')),
      [],
    )
  },
)

test('alerts: the 375 px form stays inside the screen', async (t) => {
  const user = await signUp(web.app.url)
  const { page } = await signedInTab(web.browser, web.app.url, user, 375, 800)
  await page.goto(`${web.app.url}/alerts?stat=signups`)
  await page.getByText('No alerts yet.').waitFor()
  t.is(await page.getByLabel('Stat', { exact: true }).inputValue(), 'signups', 'a stat page link fills the stat in')
  t.is(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0)
  await screenshot(page, 'alerts-375')
})

test("GET /api/v1/alerts/:id/deliveries: 400 for a bad id, 404 for another account's alert, 401 without credentials", async (t) => {
  const owner = await signUp(web.app.url)
  const other = await signUp(web.app.url)
  const created = await request(web.app.url, '/api/v1/alerts', {
    json: { stat_name: 'x', condition_type: 'above', threshold: 1, channel: 'webhook', channel_config: { webhook_url: hook.url } },
    session: owner.session,
  })
  t.is(created.status, 201)
  const path = `/api/v1/alerts/${created.body.alert.id}/deliveries`
  const mine = await request(web.app.url, path, { session: owner.session })
  t.is(mine.status, 200)
  t.deepEqual(mine.body, { deliveries: [] })
  const theirs = await request(web.app.url, path, { session: other.session })
  t.is(theirs.status, 404)
  t.is(theirs.body.detail, 'alert not found')
  const bad = await request(web.app.url, '/api/v1/alerts/not-a-uuid/deliveries', { session: owner.session })
  t.is(bad.status, 400)
  t.is(bad.body.detail, 'alert id must be a UUID')
  t.is((await request(web.app.url, path)).status, 401)
})

test("GET /api/v1/usage: the plan's limits and what is used, for a key or a session", async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  t.is(
    (
      await request(web.app.url, '/api/v1/points', {
        json: {
          points: [
            { stat: 'a', count: 1 },
            { stat: 'b', value: 2 },
            { stat: 'b', value: 3 },
          ],
        },
        bearer: key,
      })
    ).status,
    200,
  )
  const res = await request(web.app.url, '/api/v1/usage', { bearer: key })
  t.is(res.status, 200)
  t.deepEqual(res.body, {
    plan: 'free',
    stats: { used: 2, limit: 10 },
    points_today: { used: 3, limit: 100_000 },
    alerts: { used: 0, limit: 2 },
    retention_days: 30,
    anomaly_detection: false,
    statsd_refused_today: 0,
  })
  t.is((await request(web.app.url, '/api/v1/usage')).status, 401)
})

test.serial('the webhook hint says what this deployment does with private addresses, and it is true', async (t) => {
  const strict = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: '0' })
  t.teardown(() => strict.close())
  for (const [target, hint, status] of [
    [web.app, /also delivers to private and internal addresses/, 201],
    [strict, /Private and internal addresses are refused\.$/, 400],
  ] as const) {
    const user = await signUp(target.url)
    const { key } = await createKey(target.url, user)
    const { page, problems } = await signedInTab(web.browser, target.url, user)
    await page.goto(`${target.url}/alerts`)
    await page.getByLabel('Webhook URL').waitFor()
    const shown = (await page.locator('#target').locator('xpath=..').textContent())!
    t.regex(shown, hint)
    // What the hint says is what the API does with a loopback target.
    const res = await request(target.url, '/api/v1/alerts', {
      bearer: key,
      json: {
        stat_name: 'x',
        condition_type: 'above',
        threshold: 1,
        channel: 'webhook',
        channel_config: { webhook_url: 'http://127.0.0.1:9/h' },
      },
    })
    t.is(res.status, status, res.text)
    t.deepEqual(problems, [])
  }
})

test.serial("the address-confirmation page looks like the app and leads back to it; /favicon.ico is the app's icon", async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const address = `confirm.${user.accountId.slice(0, 8)}@example.com`
  const res = await request(web.app.url, '/api/v1/alerts', {
    bearer: key,
    json: { stat_name: 'x', condition_type: 'above', threshold: 1, channel: 'email', channel_config: { email: address } },
  })
  t.is(res.status, 201, res.text)
  const [mail] = await smtp.waitFor(1, (m) => m.to.includes(address))
  const link = /(https?:\/\/\S+\/api\/v1\/email\/confirm\?token=\S+)/.exec(mail.text)![1]
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  const failed: string[] = []
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`)
  })
  const shown = await page.goto(link)
  t.is(shown?.status(), 200)
  await page.getByRole('heading', { name: 'Address confirmed' }).waitFor()
  // The app's stylesheet and header: the page is styled (not the browser's default serif) and has the navigation.
  t.is(await page.locator('link[rel="stylesheet"]').count(), 1)
  t.notRegex(await page.evaluate(() => getComputedStyle(document.body).fontFamily), /^(Times|serif)/i)
  t.true(await visible(page.getByRole('navigation', { name: 'Main' })))
  await page.getByRole('link', { name: 'Go to your alerts' }).click()
  await page.waitForURL(`${web.app.url}/alerts`)
  await page.locator(`[data-alert="${res.body.alert.id}"] .badge.ok`).waitFor()
  t.deepEqual(failed, [], 'no request of either page failed (the icon included)')
  t.deepEqual(problems, [])

  const icon = await request(web.app.url, '/favicon.ico')
  t.is(icon.status, 200)
  t.regex(icon.headers.get('content-type') ?? '', /^image\/svg\+xml/)
  t.regex(icon.text, /^<svg /)
  t.truthy(icon.headers.get('content-security-policy'))
  const direct = await page.goto(`${web.app.url}/favicon.ico`)
  t.is(direct?.status(), 200)
})

test.serial('the alert form creates PagerDuty and Opsgenie alerts with their keys; a malformed key is refused by the form', async (t) => {
  const user = await signUp(web.app.url)
  await web.app.sql`update accounts set plan = 'starter' where id = ${user.accountId}`
  const { key } = await createKey(web.app.url, user)
  t.is((await request(web.app.url, '/api/v1/stats/oncall.depth/value', { json: { value: 1 }, bearer: key })).status, 200)
  const { page, problems, context } = await signedInTab(web.browser, web.app.url, user)
  t.teardown(() => context.close())
  const mine = async () =>
    (
      await web.app.sql<{ channel: string; channel_config: Record<string, string> }[]>`
      select channel, channel_config from alerts where account_id = ${user.accountId} order by created_at`
    ).map((r) => ({ channel: r.channel, channel_config: r.channel_config }))
  await page.goto(`${web.app.url}/alerts`)
  await page.getByText('No alerts yet.').waitFor()
  // Far above the stat's value: the running evaluator never fires these at the real services.
  await page.getByLabel('Stat', { exact: true }).fill('oncall.depth')
  await page.getByLabel('Threshold').fill('1000000')

  await page.getByRole('radio', { name: 'PagerDuty' }).check()
  await page.getByLabel('PagerDuty routing key').fill('short-key')
  await page.getByRole('button', { name: 'Create alert' }).click()
  t.is(await page.locator('#target-error').textContent(), 'A PagerDuty integration key: 20 to 64 letters and digits.')
  t.deepEqual(await mine(), [], 'nothing stored')
  const routingKey = 'R0ut1ngKey0123456789abcdef012345'
  await page.getByLabel('PagerDuty routing key').fill(routingKey)
  await page.getByRole('button', { name: 'Create alert' }).click()
  await page.getByText('Alert on “oncall.depth” created').waitFor()
  t.true(await visible(page.getByText('→ PagerDuty: …2345')))

  // The form keeps the stat and clears the threshold and the key after a creation.
  await page.getByLabel('Threshold').fill('1000000')
  await page.getByRole('radio', { name: 'Opsgenie' }).check()
  t.is(await page.getByLabel('Opsgenie API key').inputValue(), '', 'switching channel clears the field')
  const genieKey = 'genie-5f0c1d2e-aaaa-bbbb-cccc-0123456789ab'
  await page.getByLabel('Opsgenie API key').fill(genieKey)
  await page.getByRole('button', { name: 'Create alert' }).click()
  await page.getByText('→ Opsgenie: …89ab').waitFor()

  t.deepEqual(await mine(), [
    { channel: 'pagerduty', channel_config: { pagerduty_routing_key: routingKey } },
    { channel: 'opsgenie', channel_config: { opsgenie_api_key: genieKey } },
  ])
  t.false((await page.content()).includes(routingKey), 'the list does not show a whole key')
  t.deepEqual(problems, [])
})
