// Journey: one alert's page (docs/decisions.md §18). From the list to the alert, mute for an hour, unmute,
// mute until a chosen time, send a test that reaches a local receiver with its answer in the history, and
// change the threshold and on_no_data (a refused value shown by its field, nothing stored).
import test from 'ava'
import { screenshot, signedInTab, visible } from '../helpers/browser.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startHttpReceiver, type HttpReceiver } from '../helpers/receivers.js'
import { webSuite } from '../helpers/suite.js'

let hook: HttpReceiver
test.before(async () => {
  hook = await startHttpReceiver()
})
test.after.always(() => hook?.close())
const web = webSuite({ workers: true, env: { ALERT_EVAL_INTERVAL_SECONDS: '3600' } })

test.serial('alert page: mute 1 hour, unmute, mute until a chosen time, send a test, change it; the history shows each', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const created = await request(web.app.url, '/api/v1/alerts', {
    json: {
      stat_name: 'queue.depth',
      condition_type: 'above',
      threshold: 5,
      channel: 'webhook',
      channel_config: { webhook_url: hook.url },
    },
    bearer: key,
  })
  t.is(created.status, 201)
  const id = created.body.alert.id
  const row = async () => (await web.app.sql`select threshold, on_no_data, muted_until from alerts where id = ${id}`)[0]
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/alerts`)
  await page.getByRole('link', { name: 'Manage alert on queue.depth' }).click()
  await page.waitForURL(`${web.app.url}/alerts/${id}`)
  await page.getByText('Not muted.').waitFor()

  await page.getByRole('button', { name: 'Mute for 1 hour' }).click()
  await page.getByText(/^Muted until /).waitFor()
  const muted = (await row()).muted_until as Date
  t.true(Math.abs(muted.getTime() - (Date.now() + 3600_000)) < 60_000)
  await page.getByRole('button', { name: 'Unmute' }).click()
  await page.getByText('Not muted.').waitFor()
  t.is((await row()).muted_until, null)

  // A chosen time, in the person's local clock: two days from now at 09:30.
  const target = new Date(Date.now() + 2 * 86_400_000)
  target.setHours(9, 30, 0, 0)
  const local = `${target.getFullYear()}-${String(target.getMonth() + 1).padStart(2, '0')}-${String(target.getDate()).padStart(2, '0')}T09:30`
  await page.getByLabel(/^Mute until \(.+ time\)$/).fill(local)
  await page.getByRole('button', { name: 'Mute until then' }).click()
  await page.getByText(/^Muted until /).waitFor()
  const chosen = await page.evaluate((v) => new Date(v).getTime(), local)
  t.is(((await row()).muted_until as Date).getTime(), chosen)

  t.true(await visible(page.getByText("One signed POST to this alert's webhook URL")))
  await page.getByRole('button', { name: 'Send a test' }).click()
  await page.getByText('Test queued').waitFor()
  const [req] = await hook.waitFor(1, (r) => r.json?.event === 'test')
  t.is(req.json.alert_id, id)
  await page
    .getByTestId('history')
    .getByText(/#1 .*: 200/)
    .waitFor()

  // A bad threshold is shown by its field and not sent; then a real change.
  await page.getByLabel('Threshold').fill('lots')
  await page.getByRole('button', { name: 'Save changes' }).click()
  t.is(await page.locator('#threshold-error').textContent(), 'Enter a number.')
  t.is((await row()).threshold, 5)
  await page.getByLabel('Threshold').fill('7.5')
  await page.getByLabel('When the stat goes quiet').selectOption('resolve')
  await page.getByRole('button', { name: 'Save changes' }).click()
  await page.getByText('Saved.').waitFor()
  t.like(await row(), { threshold: 7.5, on_no_data: 'resolve' })

  const history = page.getByTestId('history')
  t.regex((await history.textContent())!, /test.*muted.*mute lifted.*muted/s)
  await screenshot(page, 'alert-management')
  t.deepEqual(problems, [])
})

test.serial('alerts page: the create form sets on_no_data for a threshold condition', async (t) => {
  const user = await signUp(web.app.url)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/alerts`)
  await page.getByLabel('Stat', { exact: true }).fill('queue.depth')
  await page.getByLabel('Threshold').fill('5')
  await page.getByLabel('When the stat goes quiet').selectOption('resolve')
  await page.getByLabel('Webhook URL').fill(hook.url)
  await page.getByRole('button', { name: 'Create alert' }).click()
  await page.getByText('Alert on “queue.depth” created').waitFor()
  const [row] = await web.app.sql`select on_no_data, window_minutes_set from alerts where account_id = ${user.accountId}`
  t.like(row, { on_no_data: 'resolve', window_minutes_set: false })
  t.deepEqual(problems, [])
})

test.serial("alert page: another account's alert shows the API's 404, not its data", async (t) => {
  const owner = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, owner)
  const created = await request(web.app.url, '/api/v1/alerts', {
    json: {
      stat_name: 'secret.stat',
      condition_type: 'above',
      threshold: 5,
      channel: 'webhook',
      channel_config: { webhook_url: hook.url },
    },
    bearer: key,
  })
  const stranger = await signUp(web.app.url)
  const { page } = await signedInTab(web.browser, web.app.url, stranger)
  await page.goto(`${web.app.url}/alerts/${created.body.alert.id}`)
  await page.getByText('alert not found (404)').waitFor()
  t.false((await page.content()).includes('secret.stat'))
})

test.serial(
  "alert page: the window field shows only where it acts, with its value; history times on the account's clock; a change is in the history",
  async (t) => {
    const user = await signUp(web.app.url)
    const { key } = await createKey(web.app.url, user)
    t.is(
      (await request(web.app.url, '/api/v1/account', { method: 'PATCH', json: { time_zone: 'Asia/Kolkata' }, session: user.session }))
        .status,
      200,
    )
    const created = await request(web.app.url, '/api/v1/alerts', {
      json: {
        stat_name: 'queue.depth',
        condition_type: 'above',
        threshold: 5,
        channel: 'webhook',
        channel_config: { webhook_url: hook.url },
      },
      bearer: key,
    })
    t.is(created.status, 201)
    const id = created.body.alert.id
    // Muted until 2030-01-02 03:04 UTC: 08:34 in Kolkata.
    t.is(
      (
        await request(web.app.url, `/api/v1/alerts/${id}`, {
          method: 'PATCH',
          json: { muted_until: '2030-01-02T03:04:00.000Z' },
          bearer: key,
        })
      ).status,
      200,
    )
    const { page, problems } = await signedInTab(web.browser, web.app.url, user)
    await page.goto(`${web.app.url}/alerts/${id}`)
    const history = page.getByTestId('history')
    await history.waitFor()
    const muteLine = (await history.locator('tbody tr').first().textContent())!
    t.regex(muteLine, /muted until .*08:34/, muteLine)
    t.notRegex(muteLine, /2030-01-02T03:04/)

    // above on the last minute: the window does nothing until "when the stat goes quiet" uses it; then it is that silence, 60 min.
    t.is(await page.locator('#window_minutes').count(), 0)
    await page.getByLabel('When the stat goes quiet').selectOption('resolve')
    const silence = page.getByLabel('Minutes of silence before "when the stat goes quiet" acts')
    t.is(await silence.inputValue(), '60')
    await silence.fill('15')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByText('Saved.').waitFor()
    const [row] = await web.app.sql`select window_minutes, window_minutes_set, on_no_data from alerts where id = ${id}`
    t.like(row, { window_minutes: 15, window_minutes_set: true, on_no_data: 'resolve' })
    t.is((await request(web.app.url, `/api/v1/alerts/${id}`, { bearer: key })).body.alert.no_data_minutes, 15)
    await history.getByText('window 5 → 15 min; when the stat goes quiet keep → resolve').waitFor()

    // heartbeat: created without a threshold; its window is its limit.
    const hb = await request(web.app.url, '/api/v1/alerts', {
      json: {
        stat_name: 'nightly.job',
        condition_type: 'heartbeat',
        window_minutes: 90,
        channel: 'webhook',
        channel_config: { webhook_url: hook.url },
      },
      bearer: key,
    })
    t.is(hb.status, 201, hb.text)
    await page.goto(`${web.app.url}/alerts/${hb.body.alert.id}`)
    t.is(await page.getByLabel('Minutes without a point before it fires').inputValue(), '90')
    t.is(await page.locator('#threshold').count(), 0)
    t.deepEqual(problems, [])
  },
)

test.serial('alert page: a change to a PagerDuty or Opsgenie alert keeps the endpoint set through the API', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  const cases = [
    {
      channel: 'pagerduty',
      config: { pagerduty_routing_key: 'R0UT1NGKEY0123456789abcdef', pagerduty_url: `${hook.url}/pd/v2/enqueue` },
      label: 'PagerDuty routing key',
      field: 'pagerduty_routing_key',
      newKey: 'NEWR0UT1NGKEY0123456789ab',
    },
    {
      channel: 'opsgenie',
      config: { opsgenie_api_key: 'genie-key-0123', opsgenie_url: `${hook.url}/og` },
      label: 'Opsgenie API key',
      field: 'opsgenie_api_key',
      newKey: 'genie-key-4567',
    },
  ] as const
  for (const c of cases) {
    const created = await request(web.app.url, '/api/v1/alerts', {
      json: { stat_name: `oncall.${c.channel}`, condition_type: 'above', threshold: 5, channel: c.channel, channel_config: c.config },
      bearer: key,
    })
    t.is(created.status, 201, created.text)
    const id = created.body.alert.id
    const config = async () => (await web.app.sql`select channel_config from alerts where id = ${id}`)[0].channel_config
    await page.goto(`${web.app.url}/alerts/${id}`)
    const endpoint = Object.values(c.config)[1]
    // "Send a test" says what it sends, in the channel's words.
    t.true(
      await visible(
        page.getByText(
          c.channel === 'pagerduty' ? "One PagerDuty event to this alert's service" : "One Opsgenie alert to this alert's team",
        ),
      ),
    )
    t.true(await visible(page.getByText(`Delivered to ${endpoint} (set through the API, kept on a change).`)))
    // A change that leaves the key alone: the custom endpoint stays.
    await page.getByLabel('Threshold').fill('9')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByText('Saved.').waitFor()
    t.deepEqual(await config(), c.config, `${c.channel}: threshold changed, endpoint kept`)
    // A new key: the key changes, the endpoint stays.
    await page.getByLabel(c.label).fill(c.newKey)
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByText('Saved.').waitFor()
    await page
      .getByTestId('history')
      .getByText(/key changed/)
      .waitFor()
    t.deepEqual(await config(), { ...c.config, [c.field]: c.newKey }, `${c.channel}: key changed, endpoint kept`)
    t.is((await web.app.sql`select threshold from alerts where id = ${id}`)[0].threshold, 9)
    if (c.channel === 'pagerduty') await screenshot(page, 'alert-pagerduty-edit')
  }
  t.deepEqual(problems, [])
})
