// Journey: "what moved with this?" from a stat's page: the ranked list of the stats that
// move with it, the strongest chosen first and overlaid on it, another chosen from the list; at 375 px too.
import test from 'ava'
import { screenshot, signedInTab } from '../helpers/browser.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'
import { webSuite } from '../helpers/suite.js'

const web = webSuite({ workers: true })

test.serial('correlations: from the stat page, the ranked list and the overlaid chart of the target and the chosen stat', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const hour = Math.floor(Date.now() / 3_600_000) * 3600
  const points = []
  // 60 hours: checkouts follow orders hour by hour, refunds go the other way, noise is its own walk.
  let walk = 50
  for (let i = 1; i <= 60; i++) {
    const orders = 20 + ((i * 7919) % 23)
    walk += ((i * 104_729) % 11) - 5
    points.push(
      { stat: 'orders', count: orders, t: hour - i * 3600 + 60 },
      { stat: 'checkouts', count: orders * 2 + (i % 2), t: hour - i * 3600 + 60 },
      { stat: 'refunds', count: 100 - orders, t: hour - i * 3600 + 60 },
      { stat: 'noise', value: walk, t: hour - i * 3600 + 60 },
    )
  }
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)

  for (const [width, shot] of [
    [1440, 'correlations'],
    [375, 'correlations-375'],
  ] as const) {
    const { page, problems } = await signedInTab(web.browser, web.app.url, user, width, 900)
    await page.goto(`${web.app.url}/stats`)
    await page.getByRole('link', { name: 'orders', exact: true }).click()
    await page.getByRole('link', { name: 'What moved with this?' }).click()
    await page.waitForURL(/\/stats\/orders\/correlations/)
    const rows = page.getByTestId('ranked').locator('tbody tr')
    await rows.first().waitFor()
    const names = await rows.locator('td[data-label="Stat"]').allTextContents()
    t.deepEqual(names.slice(0, 2).sort(), ['checkouts', 'refunds'], 'the two that move with it rank first')
    t.is(names.at(-1), 'noise')
    await page.locator(`[data-testid=overlay][data-drawn="${names[0]}"]`).waitFor()
    await page.getByRole('button', { name: 'noise' }).click()
    await page.locator('[data-testid=overlay][data-drawn="noise"]').waitFor()
    t.is(await page.locator('[data-testid=overlay] .u-axis').count(), 3, 'time and one axis for each stat')
    await page.getByRole('heading', { name: 'orders and noise' }).waitFor()
    if (width === 375) t.true(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no sideways scroll at 375 px')
    await screenshot(page, shot)
    t.deepEqual(problems, [])
  }
})

test.serial('correlations: the page names the method its coefficients come from, and another can be chosen', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const hour = Math.floor(Date.now() / 3_600_000) * 3600
  const points = []
  // A shared daily cycle plus independent wiggles: departures and Spearman disagree on such a pair.
  for (let i = 1; i <= 72; i++) {
    const cycle = 50 + 40 * Math.sin((2 * Math.PI * ((hour / 3600 - i) % 24)) / 24)
    points.push(
      { stat: 'web', value: cycle + ((i * 7919) % 13), t: hour - i * 3600 + 60 },
      { stat: 'db', value: cycle + ((i * 104_729) % 17), t: hour - i * 3600 + 60 },
    )
  }
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  const coefficient = async (method: string) => {
    const res = await request(web.app.url, `/api/v1/correlations?stat=web&range=7d&max_lag=6&method=${method}`, { bearer: key })
    t.is(res.status, 200)
    return (res.body as any).results.find((r: any) => r.stat_name === 'db').coefficient.toFixed(2) as string
  }
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/stats/web/correlations`)
  const cell = page.getByTestId('ranked').locator('tbody tr').filter({ hasText: 'db' }).locator('td[data-label="Coefficient"]')
  await page.getByTestId('method').waitFor()
  t.regex((await page.getByTestId('method').textContent())!, /^Method: Departures, /)
  t.notRegex((await page.locator('main').textContent())!, /Spearman,/, 'no other method is named for the figures shown')
  t.is(await cell.textContent(), await coefficient('departures'))
  await page.getByRole('group', { name: 'Method' }).getByRole('button', { name: 'Spearman' }).click()
  await page.getByTestId('method').filter({ hasText: 'Method: Spearman' }).waitFor()
  t.is(await cell.textContent(), await coefficient('spearman'))
  t.regex(page.url(), /method=spearman/)
  await page.reload()
  await page.getByTestId('method').filter({ hasText: 'Method: Spearman' }).waitFor()
  t.deepEqual(problems, [])
})
