// Journey: a question. The answer, the data behind a disclosure, the
// verifier's line; an empty question refused with the API's message.
import test from 'ava'
import type { Browser } from 'playwright-core'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { launchBrowser, screenshot, signedInTab } from '../helpers/browser.js'
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

test.serial('ask: a question answered with its data and the verifier line', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const noonYesterday = Math.floor(Date.now() / 86_400_000) * 86_400 - 43_200
  const points = [4, 7, 31].map((count, i) => ({ stat: 'signups', count, t: noonYesterday + i * 600 }))
  t.is((await request(app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(app)

  const { page, problems } = await signedInTab(browser, app.url, user)
  await page.goto(`${app.url}/ask`)
  await page.getByRole('button', { name: 'Ask', exact: true }).click()
  t.is(await page.locator('#query-error').textContent(), 'must not be empty')

  await page.getByLabel('Your question').fill('How many signups yesterday?')
  await page.keyboard.press('Enter')
  const answer = page.getByTestId('answer')
  await answer.waitFor()
  t.regex((await answer.textContent())!, /42/)
  t.regex((await page.getByTestId('verifier').textContent())!, /\S/)
  await page.getByText(/The data this answer rests on/).click()
  const row = page.locator('td[data-label="Value"]').first()
  t.is(await row.textContent(), '42')
  t.regex(page.url(), /\?q=How\+many\+signups\+yesterday/)
  await screenshot(page, 'ask')
  t.deepEqual(problems.filter((p) => !p.includes('status of 400')), [], 'nothing but the refused empty question')
})
