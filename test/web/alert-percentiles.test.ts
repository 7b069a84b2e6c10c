// Journey: an alert on a percentile in a real Chromium. The form offers "Compare" for above, below and
// sustained only, asks for the window a percentile is taken over, back-tests a threshold on that percentile, and
// creates the alert; the list and the alert's page say what it compares. A counter's refusal is shown as the API
// words it, and nothing is stored.
import test from 'ava'
import { screenshot, signedInTab } from '../helpers/browser.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'
import { startHttpReceiver, type HttpReceiver } from '../helpers/receivers.js'
import { webSuite } from '../helpers/suite.js'

let hook: HttpReceiver
test.before(async () => {
  hook = await startHttpReceiver()
})
test.after.always(() => hook?.close())
const web = webSuite({ workers: true, env: { ALERT_EVAL_INTERVAL_SECONDS: '3600' } })

test('alerts: a p95 alert from the form, back-tested on its percentile, shown with what it compares; a counter refused', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  await web.app.sql`update accounts set plan = 'pro' where id = ${user.accountId}`
  const T = Math.floor(Date.now() / 60_000) * 60
  const points = [
    ...Array.from({ length: 1440 }, (_, i) => ({ stat: 'api.latency', t: T - 14_400 + i * 10, value: i % 360 < 3 ? 800 : 100 })),
    { stat: 'orders', t: T - 60, count: 2 },
  ]
  for (let i = 0; i < points.length; i += 1000) {
    t.is((await request(web.app.url, '/api/v1/points', { json: { points: points.slice(i, i + 1000) }, bearer: key })).status, 200)
  }
  await settle(web.app)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/alerts?stat=api.latency`)
  await page.getByText('No alerts yet.').waitFor()

  // Compare is offered for above, below and sustained, not for a change or a heartbeat.
  for (const condition of ['pct_change', 'heartbeat', 'missing_data', 'anomaly']) {
    await page.getByLabel('Condition').selectOption(condition)
    t.is(await page.getByLabel('Compare', { exact: true }).count(), 0, condition)
  }
  await page.getByLabel('Condition').selectOption('above')
  t.is(await page.getByLabel('Over the last how many minutes').count(), 0, "no window for the last minute's value")
  await page.getByLabel('Compare', { exact: true }).selectOption('p95')
  await page.getByLabel('Over the last how many minutes').fill('5')

  // The threshold helper back-tests on the p95 over 5 minutes: 800 at each of the four bursts.
  await page.getByRole('button', { name: 'Suggest a threshold' }).click()
  await page.locator('.suggest table').waitFor()
  t.regex((await page.locator('.suggest').textContent())!, /\(the p95 over the 5 minutes before each\)/)
  t.regex((await page.locator('.suggest').textContent())!, /The largest minutes of the lookback: 800 \(/)
  await screenshot(page, 'alerts-percentile-suggest')

  await page.getByLabel('Threshold').fill('500')
  await page.getByLabel('Webhook URL').fill(hook.url)
  await page.getByRole('button', { name: 'Create alert' }).click()
  await page.getByText('Alert on “api.latency” created').waitFor()
  await page.locator('article', { hasText: 'p95 over 5 min above 500' }).waitFor()
  const [row] = await web.app.sql`select aggregation, window_minutes, threshold from alerts where account_id = ${user.accountId}`
  t.deepEqual({ ...row }, { aggregation: 'p95', window_minutes: 5, threshold: 500 })

  // A counter: the API's refusal as it says it, nothing stored.
  await page.getByLabel('Stat', { exact: true }).fill('orders')
  await page.getByLabel('Compare', { exact: true }).selectOption('p99')
  await page.getByLabel('Threshold').fill('1')
  await page.getByLabel('Webhook URL').fill(hook.url)
  await page.getByRole('button', { name: 'Create alert' }).click()
  const refusal = page.locator('form .notice.error')
  await refusal.waitFor()
  t.is(
    await refusal.textContent(),
    'aggregation p99: "orders" is a counter, and only gauges have percentiles (a counter\'s minute is a sum): use aggregation avg (400)',
  )
  t.is((await web.app.sql`select 1 from alerts where account_id = ${user.accountId}`).length, 1)

  // The alert's own page says what it compares.
  await page.getByRole('link', { name: 'Manage alert on api.latency' }).click()
  await page.getByTestId('aggregation').waitFor()
  t.is(await page.getByTestId('aggregation').textContent(), 'p95 over 5 min')
  await screenshot(page, 'alert-percentile')
  t.deepEqual(
    problems.filter((p) => !p.includes('status of 400')),
    [],
  )
})
