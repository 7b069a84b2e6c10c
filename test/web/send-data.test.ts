// The Send data page (issue 31 item 5): copy-paste set-ups for Telegraf, a StatsD client and Prometheus,
// filled in with a key created on the page, under the app's strict CSP; the key in the set-up works.
import test from 'ava'
import type { Browser } from 'playwright-core'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { launchBrowser, screenshot, signedInTab } from '../helpers/browser.js'
import { signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { APP_CSP } from '../../api/web/pages.js'

let app: TestApp
let browser: Browser

test.before(async () => {
  ;[app, browser] = await Promise.all([startTestApp({ STATSD_PORT: '0' }), launchBrowser()])
})
test.after.always(async () => {
  await browser?.close()
  await app?.close()
})

test('send data: a key created on the page fills the Telegraf, StatsD and Prometheus set-ups, and it writes', async (t) => {
  const user = await signUp(app.url)
  const { page, problems } = await signedInTab(browser, app.url, user)
  const res = await page.goto(`${app.url}/send`)
  t.is(res?.headers()['content-security-policy'], APP_CSP)
  t.regex((await page.getByTestId('telegraf').textContent())!, /token = "<API_KEY>"/, 'a placeholder until a key is given')
  await page.getByRole('button', { name: 'Create a key for these agents' }).click()
  await page.getByTestId('key-note').waitFor()
  const key = await page.getByLabel('API key').inputValue()
  t.regex(key, /^mk_/)
  const telegraf = (await page.getByTestId('telegraf').textContent())!
  t.true(telegraf.includes(`token = "${key}"`))
  t.true(telegraf.includes(`urls = ["${app.url}"]`))
  const statsd = (await page.getByTestId('statsd').textContent())!
  t.true(statsd.includes(`prefix: '${key}.'`))
  t.true(statsd.includes('port: 0') || /port: \d+/.test(statsd))
  const prom = (await page.getByTestId('prometheus').textContent())!
  t.true(prom.includes(`url: ${app.url}/api/v1/prom/write`))
  t.true(prom.includes(`credentials: ${key}`))
  t.is((await page.getByRole('button', { name: /^Copy .* set-up$/ }).count()), 3)
  t.true(await page.getByRole('link', { name: 'Send data' }).isVisible(), 'in the navigation')
  await screenshot(page, 'send-data')
  // The key the page filled in is one the write routes take.
  const write = await request(app.url, '/api/v2/write?precision=s', { body: 'from_page v=1', headers: { authorization: `Token ${key}` } })
  t.is(write.status, 204)
  t.deepEqual(problems, [])
})

test('send data needs a session', async (t) => {
  const res = await request(app.url, '/send')
  t.is(res.status, 302)
  t.regex(res.headers.get('location') ?? '', /^\/signin\?next=%2Fsend/)
})
