// Journey: checkout through the payment provider's stand-in, back to the
// billing page with the new plan shown.
import test from 'ava'
import type { Browser } from 'playwright-core'
import { startPaymentStandin, type PaymentStandin } from '../../shared/billing/standin/server.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { launchBrowser, screenshot, signedInTab } from '../helpers/browser.js'
import { signUp } from '../helpers/factories.js'

const PRICES = [{ id: 'price_w_starter', label: 'Starter', amount: 9 }, { id: 'price_w_pro', label: 'Pro', amount: 29 }, { id: 'price_w_business', label: 'Business', amount: 99 }]
let app: TestApp
let standin: PaymentStandin
let browser: Browser

test.before(async () => {
  ;[standin, browser] = await Promise.all([startPaymentStandin({ secretKey: 'sk_test_web', webhookSecret: 'whsec_web_secret', prices: PRICES }), launchBrowser()])
  app = await startTestApp({
    STRIPE_SECRET_KEY: 'sk_test_web', STRIPE_WEBHOOK_SECRET: 'whsec_web_secret', STRIPE_API_BASE: standin.url,
    STRIPE_PRICE_STARTER: PRICES[0].id, STRIPE_PRICE_PRO: PRICES[1].id, STRIPE_PRICE_BUSINESS: PRICES[2].id,
  })
  standin.setWebhookUrl(`${app.url}/api/payments/webhook`)
  await app.startWorkers()
})
test.after.always(async () => {
  await browser?.close()
  await app?.close()
  await standin?.close()
})

test.serial('billing: upgrade through the hosted checkout and come back to the new plan', async (t) => {
  const user = await signUp(app.url)
  const { page, problems } = await signedInTab(browser, app.url, user)
  await page.goto(`${app.url}/billing`)
  t.is(await page.getByTestId('plan').textContent(), 'free')
  await page.getByRole('button', { name: 'Upgrade to pro' }).click()
  await page.waitForURL(`${standin.url}/checkout/**`)
  await page.locator('form[method="post"] [type="submit"], form[method="post"] button').first().click()
  await page.waitForURL(/\/billing\?billing=updated$/)
  await page.getByText('your plan is updated').waitFor()
  t.is(await page.getByTestId('plan').textContent(), 'pro')
  t.is((await app.sql`select plan from accounts where id = ${user.accountId}`)[0].plan, 'pro')
  await screenshot(page, 'billing')
  t.deepEqual(problems, [])
})
