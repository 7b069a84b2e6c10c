// Journey: one clock. A browser in New York with a British locale sees its own zone on
// every chart axis and in every date, written the British way (24-hour); the account page sets
// Asia/Tokyo, and from then on the axes, the dates and the question box's "yesterday" are Tokyo's.
import test from 'ava'
import type { Page } from 'playwright-core'
import { screenshot } from '../helpers/browser.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startHttpReceiver, type HttpReceiver } from '../helpers/receivers.js'
import { settle } from '../helpers/storage.js'
import { webSuite } from '../helpers/suite.js'

let hook: HttpReceiver
test.before(async () => {
  hook = await startHttpReceiver()
})
test.after.always(() => hook?.close())
const web = webSuite({ workers: true })

/** A tab in a browser set to New York time and a British locale, signed in as the user. */
async function tab(user: User, width = 1280): Promise<{ page: Page; problems: string[] }> {
  const context = await web.browser.newContext({
    viewport: { width, height: 900 },
    deviceScaleFactor: 1,
    timezoneId: 'America/New_York',
    locale: 'en-GB',
  })
  const [name, value] = user.session.cookie.split('=')
  await context.addCookies([{ name, value, url: web.app.url }])
  const page = await context.newPage()
  page.setDefaultTimeout(15_000)
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`)
  })
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
  return { page, problems }
}

const written = (zone: string, iso: string) =>
  new Intl.DateTimeFormat('en-GB', {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
    timeZone: zone,
  }).format(Date.parse(iso))

test.serial("29 one clock: the browser's zone by default, then the account's on every axis, date and question", async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const now = Math.floor(Date.now() / 1000)
  const points = Array.from({ length: 24 }, (_, i) => ({ stat: 'signups', count: i + 1, t: now - 600 - i * 3_600 }))
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  const d = (await request(web.app.url, '/api/v1/dashboards', { bearer: key, json: { name: 'Growth', cards: [{ stats: ['signups'] }] } }))
    .body.dashboard
  const created = (await request(web.app.url, '/api/v1/auth/me', { bearer: key })).body.account.created_at as string
  const { page, problems } = await tab(user)

  // No zone set: the browser's.
  await page.goto(`${web.app.url}/stats/signups`)
  const chart = page.locator('.chart[data-drawn-at]')
  await chart.waitFor()
  t.is(await chart.getAttribute('data-time-axis'), 'Time (America/New_York)')
  t.regex((await chart.getAttribute('aria-label'))!, /; times in America\/New_York$/)
  // The legend's time (the cursor over the chart) is written the British way: 24-hour, no AM/PM.
  const box = (await chart.locator('.u-over').boundingBox())!
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2)
  const legendTime = (await page.locator('.u-legend .u-series').first().locator('.u-value').textContent())!
  t.regex(legendTime, /^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}$/, legendTime)
  await page.goto(`${web.app.url}/account`)
  t.is(
    await page.locator('.summary div').filter({ hasText: 'Member since' }).locator('dd').textContent(),
    written('America/New_York', created),
  )
  t.regex((await page.getByTestId('zone-now').textContent())!, /in America\/New_York \(this browser's zone\)/)
  await page.goto(`${web.app.url}/ask`)
  await page.getByText('calendar periods in America/New_York').waitFor()

  // The account chooses Tokyo.
  await page.goto(`${web.app.url}/account`)
  await page.getByLabel('Zone', { exact: true }).selectOption('Asia/Tokyo')
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Save time zone' }).click()])
  await page.getByTestId('zone-now').getByText('Asia/Tokyo').waitFor()
  t.is((await web.app.sql`select time_zone from accounts where id = ${user.accountId}`)[0].time_zone, 'Asia/Tokyo')
  t.is(await page.getByLabel('Zone', { exact: true }).inputValue(), 'Asia/Tokyo')
  t.is(await page.locator('.summary div').filter({ hasText: 'Member since' }).locator('dd').textContent(), written('Asia/Tokyo', created))
  await screenshot(page, 'account-time-zone')

  await page.goto(`${web.app.url}/stats/signups`)
  await chart.waitFor()
  t.is(await chart.getAttribute('data-time-axis'), 'Time (Asia/Tokyo)')
  await screenshot(page, 'stat-time-zone', false)
  await page.goto(`${web.app.url}/dashboards/${d.id}`)
  const card = page.locator('.chart[data-card][data-drawn-at]')
  await card.waitFor()
  t.is(await card.getAttribute('data-time-axis'), 'Time (Asia/Tokyo)')
  t.regex((await card.getAttribute('aria-label'))!, /; times in Asia\/Tokyo$/)

  // The question box reads "yesterday" as Tokyo's yesterday and says so.
  await page.goto(`${web.app.url}/ask`)
  await page.getByText('calendar periods in Asia/Tokyo').waitFor()
  await page.getByLabel('Your question').fill('how many signups yesterday?')
  const [answered] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/api/v1/query')),
    page.getByRole('button', { name: 'Ask', exact: true }).click(),
  ])
  const body = await answered.json()
  const tokyoYesterday = (Math.floor((Date.now() / 1000 + 9 * 3_600) / 86_400) - 1) * 86_400 - 9 * 3_600
  t.is(body.intent.timezone, 'Asia/Tokyo')
  t.is(body.intent.window.from, new Date(tokyoYesterday * 1000).toISOString())
  t.regex((await page.getByTestId('answer').textContent())!, /Asia\/Tokyo/)

  // A mute "until" typed on the alert page is read on Tokyo's clock, not the browser's New York one.
  const alert = (
    await request(web.app.url, '/api/v1/alerts', {
      bearer: key,
      json: {
        stat_name: 'signups',
        condition_type: 'above',
        threshold: 1_000,
        channel: 'webhook',
        channel_config: { webhook_url: hook.url },
      },
    })
  ).body.alert
  const day = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10)
  await page.goto(`${web.app.url}/alerts/${alert.id}`)
  await page.getByLabel('Mute until (Asia/Tokyo time)').fill(`${day}T09:30`)
  await page.getByRole('button', { name: 'Mute until then' }).click()
  await page.getByText(/^Muted until /).waitFor()
  const [muted] = await web.app.sql<{ muted_until: Date }[]>`select muted_until from alerts where id = ${alert.id}`
  t.is(muted.muted_until.toISOString(), new Date(Date.parse(`${day}T09:30:00Z`) - 9 * 3_600_000).toISOString())
  t.deepEqual(problems, [])
})

test.serial("29 one clock at 375 px: the account page's zone setting fits", async (t) => {
  const user = await signUp(web.app.url)
  const { page, problems } = await tab(user, 375)
  await page.goto(`${web.app.url}/account`)
  await page.getByLabel('Zone', { exact: true }).waitFor()
  t.is(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0, 'no sideways scrolling')
  await screenshot(page, 'account-time-zone-375')
  t.deepEqual(problems, [])
})

test.serial('the zone list offers current names (Asia/Kolkata, Europe/Kyiv), not the legacy ones; choosing one stores it', async (t) => {
  const user = await signUp(web.app.url)
  const { page, problems } = await tab(user, 1280)
  await page.goto(`${web.app.url}/account`)
  const select = page.getByLabel('Zone', { exact: true })
  await select.waitFor()
  const offered = await select.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))
  for (const name of ['Asia/Kolkata', 'Europe/Kyiv', 'Asia/Ho_Chi_Minh', 'America/Nuuk']) t.true(offered.includes(name), name)
  for (const name of ['Asia/Calcutta', 'Europe/Kiev', 'Asia/Saigon', 'America/Godthab']) t.false(offered.includes(name), name)
  await select.selectOption('Europe/Kyiv')
  await page.getByRole('button', { name: 'Save time zone' }).click()
  await page.getByTestId('zone-now').filter({ hasText: 'Europe/Kyiv' }).waitFor()
  t.is((await web.app.sql`select time_zone from accounts where id = ${user.accountId}`)[0].time_zone, 'Europe/Kyiv')
  t.deepEqual(problems, [])
})
