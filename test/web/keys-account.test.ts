// Journeys: create and revoke an API key; sign out. And what every page
// answers with: the shell's security headers, the redirect without a session.
import test from 'ava'
import { openTab, screenshot, signedInTab, signUpInBrowser, visible } from '../helpers/browser.js'
import { signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { webSuite } from '../helpers/suite.js'

const web = webSuite()

test.serial('keys: create one (secret shown once), revoke it after a confirmation; it stops working', async (t) => {
  const { page, problems } = await openTab(web.browser)
  await signUpInBrowser(page, web.app.url, `keys.${Date.now()}@example.com`)
  // A validation error from the API is shown next to its field.
  await page.getByRole('button', { name: 'Create key' }).click()
  t.is(await page.locator('#label-error').textContent(), 'must not be empty')
  t.is(await page.getByLabel('New key label').getAttribute('aria-invalid'), 'true')

  await page.getByLabel('New key label').fill('ci runner')
  await page.keyboard.press('Enter') // keyboard submits the form
  const secret = (await page.getByTestId('secret').textContent())!.trim()
  t.is((await request(web.app.url, '/api/v1/stats', { bearer: secret })).status, 200)
  const row = page.getByRole('row', { name: /ci runner/ })
  t.true(await visible(row.getByText('never')), 'last used: never, before the key is used by the list page')
  await page.reload()
  t.true(await visible(row), 'the list is drawn again')
  t.is(await page.getByTestId('secret').count(), 0, 'the secret is not shown again')
  await screenshot(page, 'keys-list')

  let asked = ''
  page.once('dialog', (d) => {
    asked = d.message()
    void d.accept()
  })
  await page.getByRole('button', { name: 'Revoke key ci runner' }).click()
  await page.getByText('Key “ci runner” revoked.').waitFor()
  t.regex(asked, /ci runner.*stops being able to write/)
  t.is(await page.getByRole('row', { name: /ci runner/ }).count(), 0)
  t.is((await request(web.app.url, '/api/v1/stats', { bearer: secret })).status, 401)
  t.deepEqual(
    problems.filter((p) => !p.includes('status of 400')),
    [],
    'nothing but the refused empty label',
  )
})

test.serial('account: plan and limits shown; sign out ends the session and pages then ask to sign in', async (t) => {
  const { page, problems } = await openTab(web.browser, 375, 800)
  await signUpInBrowser(page, web.app.url, `acct.${Date.now()}@example.com`)
  await page.getByRole('link', { name: 'Account' }).click()
  await page.getByRole('heading', { name: 'Plan limits' }).waitFor()
  t.true(await visible(page.getByRole('row', { name: /Tracked stats\s+0\s+10/ })))
  await screenshot(page, 'account-375')
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.waitForURL(/\/signin$/)
  await page.goto(`${web.app.url}/alerts`)
  t.regex(page.url(), /\/signin\?next=%2Falerts$/)
  t.deepEqual(problems, [])
})

test.serial('sign-in: a wrong password shows the API detail; the right one returns to the page asked for', async (t) => {
  const user = await signUp(web.app.url)
  const { page, problems } = await openTab(web.browser)
  await page.goto(`${web.app.url}/keys`)
  await page.waitForURL(/\/signin\?next=%2Fkeys/)
  await page.getByLabel('E-mail').fill(user.email)
  await page.getByLabel('Password').fill('not the password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  const alert = page.getByRole('alert')
  await alert.waitFor()
  t.regex((await alert.textContent())!, /\(401\)/)
  await screenshot(page, 'signin-error')
  await page.getByLabel('Password').fill(user.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(/\/keys$/)
  t.deepEqual(
    problems.filter((p) => !p.includes('401')),
    [],
  )
})

test('shells: strict CSP and security headers, no store; a page without a session redirects; ?next= never leaves the site', async (t) => {
  const res = await request(web.app.url, '/signin')
  t.is(res.status, 200)
  const csp = res.headers.get('content-security-policy')!
  t.regex(csp, /script-src 'self'(;|$)/)
  t.regex(csp, /style-src 'self'(;|$)/)
  t.regex(csp, /frame-ancestors 'none'/)
  t.notRegex(res.text, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script')
  t.notRegex(res.text, /style=/, 'no inline style')
  t.is(res.headers.get('x-content-type-options'), 'nosniff')
  t.is(res.headers.get('x-frame-options'), 'DENY')
  t.is(res.headers.get('cache-control'), 'no-store')
  const stats = await request(web.app.url, '/stats/some%20stat')
  t.is(stats.status, 302)
  t.is(stats.headers.get('location'), '/signin?next=%2Fstats%2Fsome%2520stat')
  const script = /src="(\/assets\/signin-[0-9a-f]+\.js)"/.exec(res.text)![1]
  const js = await fetch(web.app.url + script, { headers: { 'accept-encoding': 'gzip' } })
  t.is(js.status, 200)
  t.regex(js.headers.get('cache-control')!, /immutable/)
  t.is((await request(web.app.url, '/assets/nope-123.js')).status, 404)

  const user = await signUp(web.app.url)
  const { page } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/signin?next=//evil.example/x`)
  t.regex(page.url(), /\/stats$/, 'signed in already: straight to the stats page')
  t.is(await page.evaluate(() => document.body.dataset.csrf), user.session.csrf, 'the shell carries the session CSRF token')
})
