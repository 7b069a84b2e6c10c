// Journeys: password reset from the sign-in page through the mailed link (used twice: the second refused),
// password change, two-factor sign-in set up on the account page and then required at sign-in, and account
// deletion, in Chromium against a real server, database, Redis and a local SMTP server.
import test from 'ava'
import { generate } from 'otplib'
import { openTab, screenshot, signedInTab } from '../helpers/browser.js'
import { signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/receivers.js'
import { webSuite } from '../helpers/suite.js'

let smtp: SmtpReceiver
test.before(async () => {
  smtp = await startSmtpReceiver()
})
test.after.always(() => smtp?.close())
const web = webSuite({ env: () => ({ SMTP_URL: smtp.url }) })

const signsIn = async (email: string, password: string) =>
  (await request(web.app.url, '/api/v1/auth/login', { json: { email, password } })).status

test.serial(
  'reset page: forgot password from sign-in, the mailed link sets a new one, the same link a second time is refused',
  async (t) => {
    const user = await signUp(web.app.url)
    const { page, problems } = await openTab(web.browser)
    await page.goto(`${web.app.url}/signin`)
    await page.getByRole('link', { name: 'Forgot your password?' }).click()
    await page.waitForURL(`${web.app.url}/reset`)
    await page.getByLabel('E-mail').fill(user.email)
    await page.getByRole('button', { name: 'Mail me a link' }).click()
    await page.getByText(`If an account uses ${user.email}, a link`).waitFor()
    const [mail] = await smtp.waitFor(1, (m) => m.to.includes(user.email))
    const link = /(http\S+\/reset\?token=\S+)/.exec(mail.text)![1]

    await page.goto(link)
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor()
    await page.getByLabel('New password', { exact: true }).fill('fresh passphrase 1')
    await page.getByLabel('New password, again').fill('fresh passphrase 2')
    await page.getByRole('button', { name: 'Set the new password' }).click()
    t.is(await page.locator('#again-error').textContent(), 'The two passwords differ.')
    t.is(await signsIn(user.email, user.password), 200, 'nothing changed yet')
    await page.getByLabel('New password, again').fill('fresh passphrase 1')
    await page.getByRole('button', { name: 'Set the new password' }).click()
    await page.getByText('Your password is changed.').waitFor()
    t.is(await signsIn(user.email, 'fresh passphrase 1'), 200)
    t.is(await signsIn(user.email, user.password), 401)

    // The same link again: refused, and the page says what to do.
    await page.goto(link)
    await page.getByLabel('New password', { exact: true }).fill('third passphrase!')
    await page.getByLabel('New password, again').fill('third passphrase!')
    await page.getByRole('button', { name: 'Set the new password' }).click()
    await page.getByText(/this reset link is unknown, expired or already used.*\(400\)/).waitFor()
    await page.getByRole('link', { name: 'Ask for a new link' }).waitFor()
    t.is(await signsIn(user.email, 'third passphrase!'), 401)
    await screenshot(page, 'reset-used-twice')
    t.deepEqual(
      problems.filter((p) => !p.includes('400')),
      [],
    )
  },
)

test.serial('account page: change the password, set up two-factor sign-in, then sign-in asks for the code', async (t) => {
  const user = await signUp(web.app.url)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/account`)

  await page.getByLabel('Current password').fill('wrong password!!')
  await page.getByLabel('New password').fill('changed passphrase')
  await page.getByRole('button', { name: 'Change password' }).click()
  await page.getByText('the password is wrong; nothing was changed (403)').waitFor()
  await page.getByLabel('Current password').fill(user.password)
  await page.getByRole('button', { name: 'Change password' }).click()
  await page.getByText('Password changed. Other sessions are signed out.').waitFor()
  t.is(await signsIn(user.email, 'changed passphrase'), 200)

  await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click()
  const secret = (await page.getByTestId('totp-secret').textContent())!
  await page.getByLabel('The 6-digit code the app shows').fill(await generate({ secret }))
  await page.getByRole('button', { name: 'Turn on' }).click()
  const codes = (await page.getByTestId('recovery-codes').textContent())!.split('\n')
  t.is(codes.length, 10)
  t.regex((await page.getByTestId('two-factor-status').textContent())!, /^On since .*Recovery codes left: 10\./)
  await screenshot(page, 'account-two-factor')
  // New recovery codes, confirmed with one of the old ones: a new set replaces the list shown.
  await page.getByLabel('Code from the app, or a recovery code').fill(codes[9])
  await page.getByRole('button', { name: 'New recovery codes' }).click()
  await page.waitForFunction((old) => document.querySelector('[data-testid="recovery-codes"]')?.textContent !== old, codes.join('\n'))
  const renewed = (await page.getByTestId('recovery-codes').textContent())!.split('\n')
  t.is(renewed.length, 10)
  t.false(renewed.includes(codes[0]))
  t.is(await signsIn(user.email, 'changed passphrase'), 401, 'two-factor on: the password alone no longer signs in')

  // Signing in now takes a code: the page asks for it after the password.
  const other = await openTab(web.browser)
  await other.page.goto(`${web.app.url}/signin`)
  await other.page.getByLabel('E-mail').fill(user.email)
  await other.page.getByLabel('Password').fill('changed passphrase')
  await other.page.getByRole('button', { name: 'Sign in' }).click()
  const codeField = other.page.getByLabel('Code from your authenticator app')
  await codeField.waitFor()
  t.false(other.page.url().includes('/stats'))
  await codeField.fill(renewed[0])
  await other.page.getByRole('button', { name: 'Sign in' }).click()
  await other.page.waitForURL(/\/stats/)
  t.deepEqual(
    [...problems, ...other.problems].filter((p) => !p.includes('40')),
    [],
  )
})

test.serial('account page: deleting the account takes the password, then everything goes and the landing page says so', async (t) => {
  const user = await signUp(web.app.url)
  const { page } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/account`)
  page.on('dialog', (d) => void d.accept())
  await page.getByLabel('Password', { exact: true }).last().fill('not my password')
  await page.getByRole('button', { name: 'Delete my account and all its data' }).click()
  await page.getByText('the password is wrong; nothing was changed (403)').waitFor()
  t.is((await web.app.sql`select 1 from accounts where id = ${user.accountId}`).length, 1)
  await page.locator('#delete-password').fill(user.password)
  await page.getByRole('button', { name: 'Delete my account and all its data' }).click()
  await page.waitForURL(`${web.app.url}/?deleted=1`)
  await page.getByText('Your account and all of its data were deleted.').waitFor()
  t.is((await web.app.sql`select 1 from accounts where id = ${user.accountId}`).length, 0)
  await page.goto(`${web.app.url}/account`)
  await page.waitForURL(/\/signin/)
})

// In Chromium: The set-up shows a QR code (allowed by the page's CSP, so it loads)
// beside the key; a tab signed in before two-factor was turned on is signed out; the code that turned it on
// signs in once in another tab.
test.serial(
  'two-factor set-up: a QR code beside the key; an older session is signed out; the code that turned it on signs in',
  async (t) => {
    const user = await signUp(web.app.url)
    const older = await signedInTab(web.browser, web.app.url, user)
    const login = await request(web.app.url, '/api/v1/auth/login', { json: { email: user.email, password: user.password } })
    const [name, value] = (login.headers.get('set-cookie') ?? '').split(';')[0].split('=')
    const { page, problems } = await openTab(web.browser)
    await page.context().addCookies([{ name, value, url: web.app.url }])
    await older.page.goto(`${web.app.url}/stats`)
    t.true(older.page.url().endsWith('/stats'))

    await page.goto(`${web.app.url}/account`)
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click()
    const qr = page.getByRole('img', { name: 'QR code of the two-factor key, for an authenticator app to scan' })
    await qr.waitFor()
    // Loaded and drawn: an image the CSP refused would have no natural size (and a console error).
    t.true(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0))
    t.true((await qr.getAttribute('src'))!.startsWith('data:image/svg+xml;base64,'))
    const secret = (await page.getByTestId('totp-secret').textContent())!
    t.regex(secret, /^[A-Z2-7]{26,}$/)
    await page.getByText(`otpauth://totp/Metrics:${encodeURIComponent(user.email)}?secret=${secret}`).waitFor()
    await screenshot(page, 'account-two-factor-qr')
    const code = await generate({ secret })
    await page.getByLabel('The 6-digit code the app shows').fill(code)
    await page.getByRole('button', { name: 'Turn on' }).click()
    await page.getByTestId('recovery-codes').waitFor()

    // The session signed in with the password alone before is signed out now. A new page of it, so that the
    // open page's own reads (refused, sending it to sign in by themselves) cannot interrupt this navigation.
    const again = await older.context.newPage()
    await again.goto(`${web.app.url}/stats`)
    t.regex(again.url(), /\/signin\?next=%2Fstats$/)
    // The same code signs in (once) within its 30 s step.
    const other = await openTab(web.browser)
    await other.page.goto(`${web.app.url}/signin`)
    await other.page.getByLabel('E-mail').fill(user.email)
    await other.page.getByLabel('Password').fill(user.password)
    await other.page.getByRole('button', { name: 'Sign in' }).click()
    await other.page.getByLabel('Code from your authenticator app').fill(code)
    await other.page.getByRole('button', { name: 'Sign in' }).click()
    await other.page.waitForURL(/\/stats/)
    t.deepEqual(
      [...problems, ...other.problems].filter((p) => !p.includes('40')),
      [],
    )
    await Promise.all([older.context.close(), other.context.close(), page.context().close()])
  },
)

// A live subscription is named first, with the way to the portal, and the "cannot be undone"
// question is never asked; with two-factor on, deleting takes a code.
test.serial(
  'account deletion with a live subscription: the page says so first, links to the portal, asks nothing, deletes nothing',
  async (t) => {
    const user = await signUp(web.app.url)
    await web.app
      .sql`insert into billing_customers (account_id, customer_id, subscription_status) values (${user.accountId}, ${`cus_${user.accountId.slice(0, 8)}`}, 'active')`
    const { page, context } = await signedInTab(web.browser, web.app.url, user)
    const dialogs: string[] = []
    page.on('dialog', (d) => {
      dialogs.push(d.message())
      void d.dismiss()
    })
    await page.goto(`${web.app.url}/account`)
    const blocked = page.getByTestId('delete-blocked')
    await blocked.waitFor()
    t.regex(
      (await blocked.textContent())!,
      /^The account has a subscription that can still be charged: cancel it first in the billing portal, then come back to delete the account\. Nothing has been deleted\.$/,
    )
    t.is(await blocked.getByRole('link', { name: 'billing portal' }).getAttribute('href'), '/api/billing/portal')
    t.true(await page.getByRole('button', { name: 'Delete my account and all its data' }).isDisabled())
    t.is(await page.locator('#delete-password').count(), 0, 'no password asked while the subscription stands')
    t.deepEqual(dialogs, [])
    t.is((await web.app.sql`select 1 from accounts where id = ${user.accountId}`).length, 1)
    await context.close()
  },
)

test.serial('account deletion with two-factor on: a code is asked beside the password; a wrong one deletes nothing', async (t) => {
  const user = await signUp(web.app.url)
  const setup = await request(web.app.url, '/api/v1/auth/2fa/setup', { method: 'POST', session: user.session })
  const enabled = await request(web.app.url, '/api/v1/auth/2fa/enable', {
    method: 'POST',
    json: { code: await generate({ secret: setup.body.secret }) },
    session: user.session,
  })
  const codes: string[] = enabled.body.recovery_codes
  const { page, context } = await signedInTab(web.browser, web.app.url, user)
  page.on('dialog', (d) => void d.accept())
  await page.goto(`${web.app.url}/account`)
  await page.locator('#delete-password').fill(user.password)
  const code = page.getByLabel('Two-factor code')
  await code.waitFor()
  await page.getByRole('button', { name: 'Delete my account and all its data' }).click()
  await page.getByText('Enter a code of your authenticator app (or a recovery code) to delete the account.').waitFor()
  await code.fill('aaaaa-aaaaa')
  await page.getByRole('button', { name: 'Delete my account and all its data' }).click()
  await page.getByText('that code is wrong or was already used; nothing was changed (403)').waitFor()
  t.is((await web.app.sql`select 1 from accounts where id = ${user.accountId}`).length, 1)
  await code.fill(codes[0])
  await page.getByRole('button', { name: 'Delete my account and all its data' }).click()
  await page.waitForURL(`${web.app.url}/?deleted=1`)
  t.is((await web.app.sql`select 1 from accounts where id = ${user.accountId}`).length, 0)
  await context.close()
})
