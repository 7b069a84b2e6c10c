// Journey: checkout through the payment provider's stand-in, back to the
// billing page with the new plan shown.
import test from 'ava'
import { startPaymentStandin, type PaymentStandin } from '../../dev/billing-standin/server.js'
import { screenshot, signedInTab, visible } from '../helpers/browser.js'
import { signUp } from '../helpers/factories.js'
import { webSuite } from '../helpers/suite.js'

const PRICES = [
  { id: 'price_w_starter', label: 'Starter', amount: 9 },
  { id: 'price_w_pro', label: 'Pro', amount: 29 },
  { id: 'price_w_business', label: 'Business', amount: 99 },
]
let standin: PaymentStandin
test.before(async () => {
  standin = await startPaymentStandin({ secretKey: 'sk_test_web', webhookSecret: 'whsec_web_secret', prices: PRICES })
})
test.after.always(() => standin?.close())
const web = webSuite({
  workers: true,
  env: () => ({
    STRIPE_SECRET_KEY: 'sk_test_web',
    STRIPE_WEBHOOK_SECRET: 'whsec_web_secret',
    STRIPE_API_BASE: standin.url,
    STRIPE_PRICE_STARTER: PRICES[0].id,
    STRIPE_PRICE_PRO: PRICES[1].id,
    STRIPE_PRICE_BUSINESS: PRICES[2].id,
  }),
})
test.before(() => standin.setWebhookUrl(`${web.app.url}/api/payments/webhook`))

test.serial('billing: upgrade through the hosted checkout and come back to the new plan', async (t) => {
  const user = await signUp(web.app.url)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/billing`)
  t.is(await page.getByTestId('plan').textContent(), 'free')
  await page.getByRole('button', { name: 'Upgrade to pro' }).click()
  await page.waitForURL(`${standin.url}/checkout/**`)
  await page.locator('form[method="post"] [type="submit"], form[method="post"] button').first().click()
  await page.waitForURL(/\/billing\?billing=updated$/)
  await page.getByText('your plan is updated').waitFor()
  t.is(await page.getByTestId('plan').textContent(), 'pro')
  t.is((await web.app.sql`select plan from accounts where id = ${user.accountId}`)[0].plan, 'pro')
  await screenshot(page, 'billing')
  t.deepEqual(problems, [])
})

test.serial('billing after cancelling says the plan is free and that nothing renews, and offers checkout again', async (t) => {
  const user = await signUp(web.app.url)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/billing`)
  await page.getByRole('button', { name: 'Upgrade to starter' }).click()
  await page.waitForURL(`${standin.url}/checkout/**`)
  await page.locator('form[method="post"] [type="submit"], form[method="post"] button').first().click()
  await page.waitForURL(/\/billing\?billing=updated$/)
  t.is(await page.getByTestId('plan').textContent(), 'starter')
  t.is(await page.getByTestId('subscription').textContent(), 'active')
  await page.getByTestId('renews').waitFor()
  await page.getByRole('link', { name: /Manage billing/ }).click()
  await page.waitForURL(`${standin.url}/portal/**`)
  await page.getByRole('button', { name: 'Cancel subscription' }).click()
  await page.waitForURL(/\/billing/)
  await page.getByTestId('plan').filter({ hasText: 'free' }).waitFor()
  t.is((await web.app.sql`select plan from accounts where id = ${user.accountId}`)[0].plan, 'free')
  t.is(await page.getByTestId('subscription').textContent(), 'Canceled: you are on the free plan; nothing renews')
  t.is(await page.getByTestId('renews').count(), 0, 'no renewal date for a subscription that ended')
  t.notRegex((await page.locator('main').textContent())!, /Renews/)
  // A new plan is a new checkout: the portal cannot change a canceled subscription.
  t.true(await visible(page.getByRole('button', { name: 'Upgrade to pro' })))
  t.is(await page.getByRole('link', { name: 'Change in the portal' }).count(), 0)
  await screenshot(page, 'billing-canceled')
  t.deepEqual(problems, [])
})
