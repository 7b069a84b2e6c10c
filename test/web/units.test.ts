// Journey: a stat's unit and direction set on its page: the unit on the axis and beside the
// figures, the change coloured by whether higher is better; on a dashboard, stats of two units read on two axes.
import test from 'ava'
import { screenshot, signedInTab } from '../helpers/browser.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'
import { webSuite } from '../helpers/suite.js'

const web = webSuite({ workers: true })

test.serial('units: latency in ms, higher is worse: the rise is red, the axis says ms; two units on a card read on two axes', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const now = Math.floor(Date.now() / 1000)
  const points = []
  // Latency rose since yesterday; so did sign-ups.
  for (let i = 0; i < 12; i++) {
    points.push({ stat: 'latency', value: 200, t: now - 600 - i * 1200 }, { stat: 'latency', value: 100, t: now - 86_400 - 600 - i * 1200 })
    points.push({ stat: 'signups', count: 3, t: now - 600 - i * 1200 }, { stat: 'signups', count: 1, t: now - 86_400 - 600 - i * 1200 })
  }
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  await request(web.app.url, '/api/v1/stats/signups', { method: 'PATCH', bearer: key, json: { unit: 'people', higher_is: 'better' } })

  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/stats`)
  await page.getByRole('link', { name: 'latency', exact: true }).click()
  await page.getByRole('button', { name: 'Set the unit and direction' }).click()
  await page.getByLabel('Unit').fill('ms')
  await page.getByLabel('When it goes up').selectOption('worse')
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  await page.getByTestId('meaning').getByText('In ms; higher is worse.').waitFor()
  t.is(await page.getByTestId('unit').textContent(), 'ms')
  const diff = page.locator('.summary div').filter({ hasText: 'Difference' }).locator('dd')
  // uPlot paints axis labels on its canvas: the chart's accessible name carries the unit too.
  await page.locator('.chart[aria-label^="Chart of latency in ms:"]').waitFor()
  t.is(await diff.getAttribute('class'), 'down', 'latency up is red')
  t.regex((await diff.textContent())!, /^\+[\d.]+ ms$/)
  await screenshot(page, 'stat-units')

  await page.goto(`${web.app.url}/stats/signups`)
  await page.getByTestId('meaning').getByText('In people; higher is better.').waitFor()
  await page.locator('.summary div').filter({ hasText: 'Difference' }).locator('dd.up').waitFor()
  t.pass('sign-ups up is green')

  const d = (
    await request(web.app.url, '/api/v1/dashboards', { bearer: key, json: { name: 'Units', cards: [{ stats: ['latency', 'signups'] }] } })
  ).body.dashboard
  await page.goto(`${web.app.url}/dashboards/${d.id}`)
  const card = page.locator('section[aria-label="latency, signups"]')
  await card.locator('.chart[data-points]').waitFor()
  t.is(await card.locator('.u-axis').count(), 3)
  t.regex(
    (await card.locator('.chart').getAttribute('aria-label'))!,
    /^Chart of latency \(ms\), signups \(people\) over 24h; times in [A-Za-z_/+-]+$/,
  )
  t.truthy(await card.locator('.u-legend').getByText('signups (right)').count())
  await screenshot(page, 'dashboard-units')
  t.deepEqual(problems, [])
})

test.serial('the summary writes thousands alike: a difference of 5,782 beside a total of 23.4k', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const now = Math.floor(Date.now() / 1000)
  // This 24 h: 23,400; the 24 h before: 17,618. Difference +5,782.
  const points = [
    { stat: 'orders', count: 23_400, t: now - 600 },
    // Three hours before the period's start: the 24 h range's start is aligned to its buckets, up to an hour
    // before now - 24 h, so a point only minutes before that fell into this period at most minutes of the hour.
    { stat: 'orders', count: 17_618, t: now - 86_400 - 3 * 3_600 },
  ]
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/stats/orders`)
  const dd = (label: string) => page.locator('.summary div').filter({ hasText: label }).locator('dd')
  await dd('Total, this period').filter({ hasText: '23.4k' }).waitFor()
  t.is(await dd('Difference').textContent(), '+5,782')
  t.is(await dd('Total, previous period').textContent(), '17.6k')
  t.deepEqual(problems, [])
})
