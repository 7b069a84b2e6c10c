// Journey: the Anomalies page. A starter account sees its stat in the
// diagnostics table with the reason in plain words; a free account sees
// which plans include detection, with a link to billing.
import test from 'ava'
import type { Browser } from 'playwright-core'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { launchBrowser, openTab, screenshot } from '../helpers/browser.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

let app: TestApp
let browser: Browser

test.before(async () => {
  ;[app, browser] = await Promise.all([startTestApp(), launchBrowser()])
  await app.startWorkers()
})
test.after.always(async () => {
  await browser?.close()
  await app?.close()
})

async function signedInTab(user: Awaited<ReturnType<typeof signUp>>) {
  const tab = await openTab(browser)
  await tab.context.addCookies([{ name: 'service_session', value: user.session.cookie.split('=')[1], url: app.url }])
  return tab
}

test.serial('anomalies: a starter account sees its stat and why it is not checked yet', async (t) => {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'starter' where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  const now = Math.floor(Date.now() / 1000)
  t.is((await request(app.url, '/api/v1/points', { json: { points: [{ stat: 'orders', count: 3, t: now - 7200 }] }, bearer: key })).status, 200)
  await settle(app)

  const { page, problems } = await signedInTab(user)
  await page.goto(`${app.url}/stats`)
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Anomalies' }).click()
  await page.waitForURL(/\/anomalies$/)
  const row = page.getByTestId('diagnostics').locator('tbody tr')
  await row.first().waitFor()
  t.is(await row.count(), 1)
  t.is(await row.locator('td[data-label="Stat"]').textContent(), 'orders')
  t.is(await row.locator('td[data-label="Checked"]').textContent(), 'no')
  t.regex((await row.locator('td[data-label="Why"]').textContent())!, /^It does not have enough hours of history yet to learn what normal looks like\./)
  await page.getByText('No open incidents').waitFor()
  t.is(await page.getByTestId('plan-notice').count(), 0)
  await screenshot(page, 'anomalies')
  t.deepEqual(problems, [])
})

test.serial('anomalies: a free account is told which plans include detection, with a link to billing', async (t) => {
  const user = await signUp(app.url)
  const { page, problems } = await signedInTab(user)
  await page.goto(`${app.url}/anomalies`)
  const notice = page.getByTestId('plan-notice')
  await notice.waitFor()
  t.regex((await notice.textContent())!, /^Anomaly detection is part of the starter, pro and business plans\./)
  t.is(await notice.getByRole('link').getAttribute('href'), '/billing')
  t.is(await page.getByTestId('diagnostics').count(), 0)
  t.deepEqual(problems, [])
})
