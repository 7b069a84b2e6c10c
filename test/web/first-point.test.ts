// Journey: open the service, sign up, create a key, send a first point with
// the exact curl the page shows, watch it appear on the stats page without a
// reload, open its chart. At 1440 px, then the same pages at 375 px.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import test from 'ava'
import { openTab, screenshot, signUpInBrowser, visible } from '../helpers/browser.js'
import { webSuite } from '../helpers/suite.js'

const run = promisify(execFile)
const web = webSuite({ workers: true })

test.serial(
  'sign-up to first point: the shown curl writes a point that appears on the stats page and its chart without a reload',
  async (t) => {
    const { page, problems } = await openTab(web.browser)
    await page.goto(`${web.app.url}/`)
    t.is(new URL(page.url()).pathname, '/', 'a visitor without a session gets the landing page')
    t.true(await visible(page.getByRole('heading', { level: 1 })))
    await page.getByRole('link', { name: 'Sign up (free)' }).click()
    await page.waitForURL(/\/signup$/)
    await signUpInBrowser(page, web.app.url, `first.${Date.now()}@example.com`)
    t.true(await visible(page.getByText('Your account is ready')))

    await page.getByLabel('New key label').fill('laptop')
    await page.getByRole('button', { name: 'Create key' }).click()
    const secret = (await page.getByTestId('secret').textContent())!.trim()
    t.regex(secret, /^[A-Za-z0-9_]{30,}$/)
    const curl = (await page.getByTestId('curl').textContent())!
    t.true(curl.includes(secret) && curl.includes(`${web.app.url}/api/v1/stats/signups/count`))
    await screenshot(page, 'keys-created')

    // Stats page first (empty), then the point arrives while it is open.
    await page.getByRole('link', { name: 'Watch it arrive on the stats page' }).click()
    await page.getByText('No stats yet.').waitFor()
    const { stdout } = await run('sh', ['-c', curl.replace(/\\\n/g, ' ')])
    t.deepEqual(JSON.parse(stdout), { status: 'ok' })
    const row = page.getByRole('link', { name: 'signups' })
    await row.waitFor({ timeout: 10_000 })
    t.is(await page.locator('td[data-label="Last value"]').first().textContent(), '1')
    t.true(await visible(page.getByText('1 of 10', { exact: false }).first()), 'plan usage shows 1 of 10 tracked stats')
    await screenshot(page, 'stats-list')

    await row.click()
    await page.waitForURL(/\/stats\/signups/)
    await page.locator('.chart[data-drawn="1"]').waitFor()
    t.is(await page.locator('.summary dd').first().textContent(), '1')
    t.true(await visible(page.locator('.u-legend').getByText('Previous period')))
    await page.getByRole('button', { name: '7d', exact: true }).click()
    await page.waitForURL(/range=7d/)
    await page.locator('.chart[data-drawn="1"]').waitFor()
    await screenshot(page, 'stat-chart')
    t.deepEqual(problems, [])
  },
)

test.serial('the pages read at 375 px: stats list and stat page fit the width', async (t) => {
  const { page, problems } = await openTab(web.browser, 375, 800)
  await signUpInBrowser(page, web.app.url, `narrow.${Date.now()}@example.com`)
  const key = await page.evaluate(async () => {
    const csrf = document.body.dataset.csrf!
    const r = await fetch('/api/v1/auth/api-keys', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-csrf': csrf },
      body: JSON.stringify({ label: 'phone' }),
    })
    return (await r.json()).key as string
  })
  for (const [stat, body] of [
    ['api.latency_ms', { value: 120.5 }],
    ['signups', { count: 3 }],
  ] as const) {
    const res = await fetch(`${web.app.url}/api/v1/stats/${stat}/${'value' in body ? 'value' : 'count'}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    t.is(res.status, 200)
  }
  await page.goto(`${web.app.url}/stats`)
  await page.getByRole('link', { name: 'signups' }).waitFor()
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
  t.is(await overflow(), 0, 'no sideways scrolling on the stats list')
  // The page says which window its 24 h totals cover: the one the dashboard API answered, the stat page's.
  const from = await page.evaluate(async () => (await (await fetch('/api/v1/dashboard?range=24h')).json()).range.from as string)
  // Written in the browser's zone and locale (no account zone is set), with the zone's name.
  const [locale, zone] = await page.evaluate(() => [navigator.language, Intl.DateTimeFormat().resolvedOptions().timeZone])
  const since = new Intl.DateTimeFormat(locale, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
    timeZone: zone,
  }).format(Date.parse(from))
  t.is(await page.locator('[data-window]').textContent(), `Last 24 h: since ${since}, the window the stat pages and embeds use for 24 h.`)
  await screenshot(page, 'stats-list-375')
  await page.getByRole('link', { name: 'api.latency_ms' }).click()
  await page.locator('.chart[data-drawn="1"]').waitFor()
  t.is(await overflow(), 0, 'no sideways scrolling on the stat page')
  // The gauge's only observation is drawn (a point in the series' colour), though the chart is too dense
  // for uPlot to draw points by itself and a lone bucket has no line.
  const seriesPixels = await page.evaluate(() => {
    const canvas = document.querySelector('.chart canvas') as HTMLCanvasElement
    const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height)
    let n = 0
    for (let i = 0; i < data.length; i += 4) if (data[i] === 0x1d && data[i + 1] === 0x4e && data[i + 2] === 0xd8) n++
    return n
  })
  t.true(seriesPixels > 0, `${seriesPixels} pixels of the series colour on the chart`)
  await screenshot(page, 'stat-chart-375')
  t.deepEqual(problems, [])
})
