// Tags in the app (docs/decisions.md §24): the stats list shows each stat once with its series count.
import test from 'ava'
import { evaluateAlerts } from '../../shared/alerts/evaluate.js'
import { insertAlert } from '../../shared/alerts/repo.js'
import { CreateAlertBody } from '../../shared/alerts/schema.js'
import { legendValueAcrossRedraw, screenshot, signedInTab } from '../helpers/browser.js'
import { deferred } from '../helpers/deferred.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'
import { webSuite } from '../helpers/suite.js'

const web = webSuite({ workers: true })

test('the stats list shows a tagged stat once, with its series count', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const points = ['web1', 'web2', 'web3'].map((host) => ({ stat: 'latency', value: 10, tags: { host } }))
  points.push({ stat: 'signups', value: 1 } as never)
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/stats`)
  const rows = page.locator('tbody tr')
  await rows.first().waitFor()
  t.is(await rows.count(), 2, 'each stat once')
  t.is(await rows.filter({ hasText: 'latency' }).locator('[data-series]').textContent(), '3 series')
  t.is(await rows.filter({ hasText: 'signups' }).locator('[data-series]').count(), 0, 'an untagged stat says nothing of series')
  t.deepEqual(problems, [])
})

test('a read of the chart before the filter was applied, answered after it, does not replace the filtered chart', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const now = Math.floor(Date.now() / 1000) - 60
  const points = ['web1', 'web2', 'web3'].map((host, i) => ({
    stat: 'latency',
    value: 10,
    t: now,
    tags: { host, region: i < 2 ? 'eu' : 'us' },
  }))
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  // Once the grouped chart is shown, the next unfiltered grouped read (the page polls) is held until released.
  let hold = false
  const held = deferred()
  const released = deferred()
  const answeredLate = deferred()
  await page.route(/\/api\/v1\/stats\/latency\?range=1h&group_by=host$/, async (route) => {
    if (!hold) return route.continue()
    held.resolve()
    await released.promise
    await route.continue()
    answeredLate.resolve()
  })
  await page.goto(`${web.app.url}/stats/latency?range=1h&group_by=host`)
  const legend = page.getByTestId('group-legend')
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="group-legend"] li').length === 3)
  hold = true
  await held.promise
  await page.locator('input[name="filter"]').fill('region:eu')
  await page.getByRole('button', { name: 'Apply' }).click()
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="group-legend"] li').length === 2)
  released.resolve()
  await answeredLate.promise
  // What the late answer would have drawn is drawn within a frame or two; the filtered chart stays.
  await page.waitForTimeout(300)
  t.deepEqual(await legend.locator('li').allTextContents(), ['■ host=web1', '■ host=web2'])
  t.deepEqual(problems, [])
})

test('the stat page groups by a tag (one line per value, a legend of the values) and filters by tags', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const now = Math.floor(Date.now() / 1000) - 60
  const points = [
    { stat: 'latency', value: 10, t: now, tags: { host: 'web1', region: 'eu' } },
    { stat: 'latency', value: 20, t: now, tags: { host: 'web2', region: 'eu' } },
    { stat: 'latency', value: 30, t: now, tags: { host: 'web3', region: 'us' } },
  ]
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/stats/latency?range=1h`)
  await page.locator('select[name="group_by"]').selectOption('host')
  const legend = page.getByTestId('group-legend')
  await legend.waitFor()
  t.deepEqual(
    await legend.locator('li').allTextContents(),
    ['■ host=web1', '■ host=web2', '■ host=web3'].map((s) => s.replace('■ ', '■ ')),
  )
  t.regex(page.url(), /group_by=host/)
  t.is(await page.locator('.chart .uplot').count(), 1, 'one chart, a line per value')
  await page.locator('input[name="filter"]').fill('region:eu')
  await page.getByRole('button', { name: 'Apply' }).click()
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="group-legend"] li').length === 2)
  t.deepEqual(await legend.locator('li').allTextContents(), ['■ host=web1', '■ host=web2'])
  t.regex(page.url(), /filter=region%3Aeu/)
  await screenshot(page, 'stat-group-by')
  t.deepEqual(problems, [])
})

test("the alert page lists an alert per group's groups and their states", async (t) => {
  const user = await signUp(web.app.url)
  await web.app.sql`update accounts set plan = 'pro' where id = ${user.accountId}`
  const { key } = await createKey(web.app.url, user)
  const body = CreateAlertBody.parse({
    stat_name: 'cpu',
    condition_type: 'above',
    threshold: 90,
    group_by: 'host',
    channel: 'webhook',
    channel_config: { webhook_url: 'http://127.0.0.1:9/hook' },
  })
  const alert = (await insertAlert(web.app.sql, user.accountId, body, 'ok', 100))!
  const now = Math.floor(Date.now() / 1000)
  const points = [
    { stat: 'cpu', value: 95, t: now - 20, tags: { host: 'web1' } },
    { stat: 'cpu', value: 40, t: now - 20, tags: { host: 'web2' } },
  ]
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  await evaluateAlerts(web.app.sql, new Date(now * 1000))
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/alerts/${alert.id}`)
  const rows = page.getByTestId('alert-groups').locator('tbody tr')
  await rows.first().waitFor()
  t.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim()))), [
    ['web1', 'Firing', '95'],
    ['web2', 'OK', '40'],
  ])
  t.deepEqual(problems, [])
})

test('the value under a mouse held still over the grouped chart stays when the next poll draws it anew', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const now = Math.floor(Date.now() / 1000)
  const points = ['web1', 'web2'].flatMap((host) =>
    Array.from({ length: 24 }, (_, i) => ({ stat: 'held', count: i + 1, t: now - 600 - i * 3_600, tags: { host } })),
  )
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/stats/held?group_by=host`)
  await page.getByTestId('group-legend').waitFor()
  const { before, after } = await legendValueAcrossRedraw(page, 1)
  t.not(after, '—')
  t.is(after, before, 'the same bucket of host=web1 under the same pixel')
  t.deepEqual(problems, [])
})
