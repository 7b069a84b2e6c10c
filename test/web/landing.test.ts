// GET / for a signed-out visitor is a page of its own (what the service does, one example
// write, sign up, sign in, the API reference) under the app's strict CSP; signed in, it goes to the stats.
import test from 'ava'
import { openTab, screenshot, signedInTab } from '../helpers/browser.js'
import { signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { webSuite } from '../helpers/suite.js'

const web = webSuite()

test('signed out: 200 with the strict CSP, no script or inline style, the example write on this deployment', async (t) => {
  const res = await request(web.app.url, '/')
  t.is(res.status, 200)
  t.regex(res.headers.get('content-type')!, /text\/html/)
  const csp = res.headers.get('content-security-policy')!
  t.regex(csp, /default-src 'none'/)
  t.regex(csp, /script-src 'self'(;|$)/)
  t.regex(csp, /style-src 'self'(;|$)/)
  t.is(res.headers.get('cache-control'), 'no-store')
  t.notRegex(res.text, /<script/, 'the page needs no script')
  t.notRegex(res.text, /style=/)
  t.true(
    res.text.includes(`curl -X POST &#39;${web.app.url}/api/v1/stats/signups/count&#39;`) ||
      res.text.includes(`curl -X POST '${web.app.url}/api/v1/stats/signups/count'`),
    'the example writes to this deployment',
  )
})

test('in Chromium: the page says what the service does and leads to sign-up, sign-in and the API reference; no console or CSP error', async (t) => {
  const { page, problems, context } = await openTab(web.browser)
  t.teardown(() => context.close())
  await page.goto(`${web.app.url}/`)
  t.is(new URL(page.url()).pathname, '/')
  t.regex((await page.getByRole('heading', { level: 1 }).textContent())!, /counters and gauges over HTTP/i)
  t.regex(
    (await page.getByTestId('example-write').textContent())!,
    /^curl -X POST '.*\/api\/v1\/stats\/signups\/count' \\\n {2}-H 'Authorization: Bearer mk_\.\.\.'/,
  )
  await screenshot(page, 'landing')
  for (const [name, path] of [
    ['Sign up (free)', '/signup'],
    ['Sign in', '/signin'],
    ['API reference', '/docs'],
  ]) {
    await page.goto(`${web.app.url}/`)
    await page.getByRole('link', { name, exact: true }).click()
    await page.waitForURL((u) => u.pathname === path)
  }
  t.deepEqual(problems, [])
})

test('signed in: / goes to the stats', async (t) => {
  const user = await signUp(web.app.url)
  const res = await request(web.app.url, '/', { session: user.session })
  t.is(res.status, 302)
  t.is(res.headers.get('location'), '/stats')
  const { page, context } = await signedInTab(web.browser, web.app.url, user)
  t.teardown(() => context.close())
  await page.goto(`${web.app.url}/`)
  t.regex(page.url(), /\/stats$/)
})
