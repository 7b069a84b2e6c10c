// Every page at 375 px ("every page usable at 375 px"): each is opened signed in (or out, for the
// pages before sign-in) with data on it, must not scroll sideways, and leaves a screenshot to look at
// (test-output/web/narrow-*.png).
import test from 'ava'
import { openTab, screenshot, signedInTab } from '../helpers/browser.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startHttpReceiver, type HttpReceiver } from '../helpers/receivers.js'
import { settle } from '../helpers/storage.js'
import { webSuite } from '../helpers/suite.js'

let hook: HttpReceiver
test.before(async () => {
  hook = await startHttpReceiver()
})
test.after.always(() => hook?.close())
const web = webSuite({ workers: true })

const overflow = (page: import('playwright-core').Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)

test.serial('375 px: no page scrolls sideways, signed in with data or signed out', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const now = Math.floor(Date.now() / 1000)
  const points = Array.from({ length: 48 }, (_, i) => [
    { stat: 'checkout.completed.orders_paid_by_card', count: (i % 7) + 1, t: now - 300 - i * 1_800 },
    { stat: 'api.latency_ms', value: 100 + (i % 5) * 10, t: now - 300 - i * 1_800 },
  ]).flat()
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  const alert = await request(web.app.url, '/api/v1/alerts', {
    bearer: key,
    json: {
      stat_name: 'api.latency_ms',
      condition_type: 'above',
      threshold: 500,
      channel: 'webhook',
      channel_config: { webhook_url: hook.url },
    },
  })
  t.is(alert.status, 201, alert.text)
  const board = (
    await request(web.app.url, '/api/v1/dashboards', {
      bearer: key,
      json: {
        name: 'Checkout and its latency',
        cards: [{ stats: ['checkout.completed.orders_paid_by_card', 'api.latency_ms'] }, { stats: ['api.latency_ms'] }],
      },
    })
  ).body.dashboard

  const signedIn: Array<[string, string]> = [
    ['stats', '/stats'],
    ['stat', '/stats/checkout.completed.orders_paid_by_card'],
    ['correlations', '/stats/api.latency_ms/correlations'],
    ['dashboards', '/dashboards'],
    ['dashboard', `/dashboards/${board.id}`],
    ['alerts', '/alerts'],
    ['alert', `/alerts/${alert.body.alert.id}`],
    ['ask', '/ask?q=how%20many%20checkout.completed.orders_paid_by_card%20yesterday'],
    ['anomalies', '/anomalies'],
    ['import', '/import'],
    ['billing', '/billing'],
    ['keys', '/keys'],
    ['send', '/send'],
    ['account', '/account'],
  ]
  const wide: string[] = []
  const { page, problems } = await signedInTab(web.browser, web.app.url, user, 375, 812)
  for (const [name, path] of signedIn) {
    await page.goto(web.app.url + path)
    await page.locator('#app h1').first().waitFor()
    await page
      .locator('#app .loading')
      .first()
      .waitFor({ state: 'detached' })
      .catch(() => {})
    if (name === 'ask') {
      await page.getByRole('button', { name: 'Ask', exact: true }).click()
      await page.getByTestId('answer').waitFor()
    }
    if (name === 'stat' || name === 'dashboard') await page.locator('.chart[data-drawn-at]').first().waitFor()
    const o = await overflow(page)
    if (o > 0) wide.push(`${path}: ${o} px too wide`)
    await screenshot(page, `narrow-${name}`)
  }
  const out = await openTab(web.browser, 375, 812)
  for (const [name, path] of [
    ['landing', '/'],
    ['signin', '/signin'],
    ['signup', '/signup'],
    ['reset', '/reset'],
  ]) {
    await out.page.goto(web.app.url + path)
    await out.page.locator('h1').first().waitFor()
    const o = await overflow(out.page)
    if (o > 0) wide.push(`${path}: ${o} px too wide`)
    await screenshot(out.page, `narrow-${name}`)
  }
  t.deepEqual(wide, [])
  t.deepEqual([...problems, ...out.problems], [])
})
