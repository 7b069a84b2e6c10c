// Journey: dashboards (decision 17) through the app's own links: the Dashboards link in the
// main navigation, a new dashboard, cards added here and from a stat's page, a stat overlaid on a card (a
// second axis for a gauge beside a counter), a legend entry clicked to isolate a stat, the crosshair shared
// across cards, reorder, remove, the dashboard's range, live updates; and the page at 375 px.
import test from 'ava'
import { screenshot, signedInTab } from '../helpers/browser.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'
import { webSuite } from '../helpers/suite.js'

const web = webSuite({ workers: true })

async function seeded() {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const now = Math.floor(Date.now() / 1000)
  const points = []
  for (let i = 0; i < 40; i++) {
    points.push(
      { stat: 'orders', count: 3 + (i % 5), t: now - 300 - i * 1800 },
      { stat: 'latency', value: 120 + 40 * Math.sin(i / 3), t: now - 300 - i * 1800 },
      { stat: 'errors', count: i % 3, t: now - 300 - i * 1800 },
    )
  }
  const res = await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })
  if (res.status !== 200) throw new Error(res.text)
  await settle(web.app)
  return { user, key }
}

const cardTitles = (page: import('playwright-core').Page) => page.getByTestId('dash-card').locator('h2').allTextContents()

test.serial(
  'dashboards: made from the navigation, cards added here and from a stat page, overlaid, isolated, synced, reordered, removed',
  async (t) => {
    const { user, key } = await seeded()
    const { page, problems } = await signedInTab(web.browser, web.app.url, user)
    await page.goto(`${web.app.url}/stats`)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboards' }).click()
    await page.waitForURL(/\/dashboards$/)
    await page.getByText('No dashboard yet.').waitFor()
    await page.getByLabel('Name').fill('Shop')
    await page.getByRole('button', { name: 'Create the dashboard' }).click()
    await page.waitForURL(/\/dashboards\/[0-9a-f-]{36}$/)
    await page.getByRole('heading', { name: /^Shop/ }).waitFor()
    await page.getByText('No cards yet.').waitFor()

    // Two cards from this page.
    for (const stat of ['orders', 'latency']) {
      await page.getByLabel('Stat for a new card').selectOption(stat)
      await page.getByRole('button', { name: 'Add the card' }).click()
      await page.locator(`section[aria-label="${stat}"] .chart[data-points]`).waitFor()
    }
    // A third from the stat's own page, reached through the stats list.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Stats' }).click()
    await page.getByRole('link', { name: 'errors', exact: true }).click()
    await page.waitForURL(/\/stats\/errors/)
    await page.getByLabel('Dashboard', { exact: true }).selectOption({ label: 'Shop' })
    await page.getByRole('button', { name: 'Add to a dashboard' }).click()
    await page.getByRole('status').getByRole('link', { name: 'Shop' }).click()
    await page.waitForURL(/\/dashboards\//)
    await page.locator('section[aria-label="errors"] .chart[data-points]').waitFor()
    t.deepEqual(await cardTitles(page), ['orders', 'latency', 'errors'])

    // Overlay latency (a gauge) on orders (a counter): one chart, two axes.
    const orders = page.locator('section[aria-label="orders"]')
    await orders.getByLabel('Overlay another stat on orders').selectOption('latency')
    await orders.getByRole('button', { name: 'Add' }).click()
    const both = page.locator('section[aria-label="orders, latency"]')
    await both.locator('.u-legend').getByText('latency (right)').waitFor()
    t.is(await both.locator('.u-axis').count(), 3, 'time, left and right axes')

    // Click a stat in the legend: it alone is shown; again: both.
    const legend = both.locator('.u-legend .u-series')
    await legend.filter({ hasText: 'orders (left)' }).click()
    t.regex((await legend.filter({ hasText: 'latency (right)' }).getAttribute('class'))!, /u-off/)
    t.notRegex((await legend.filter({ hasText: 'orders (left)' }).getAttribute('class'))!, /u-off/)
    await legend.filter({ hasText: 'orders (left)' }).click()
    t.notRegex((await legend.filter({ hasText: 'latency (right)' }).getAttribute('class'))!, /u-off/)

    // The crosshair: hovering one chart moves the others' cursor to the same time.
    const over = await both.locator('.u-over').boundingBox()
    await page.mouse.move(over!.x + over!.width * 0.6, over!.y + over!.height / 2)
    const other = page.locator('section[aria-label="errors"] .u-cursor-x')
    await page.waitForFunction((el) => !!el && !el.classList.contains('u-off'), await other.elementHandle())
    t.pass('the errors card shows the crosshair while the pointer is on another card')
    await screenshot(page, 'dashboard')

    // Reorder and remove.
    await page.getByRole('button', { name: 'Move errors up' }).click()
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=dash-card] h2')[1]?.textContent === 'errors')
    t.deepEqual(await cardTitles(page), ['orders, latency', 'errors', 'latency'])
    await page.getByRole('button', { name: 'Remove latency' }).click()
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=dash-card]').length === 2)

    // The dashboard's range, kept; a card with its own range keeps it.
    await page.getByLabel('Range of errors').selectOption('24h')
    await page.getByRole('group', { name: 'Range of the dashboard' }).getByRole('button', { name: '7d' }).click()
    await page.waitForFunction(() =>
      document.querySelector('section[aria-label="orders, latency"] .chart')?.getAttribute('aria-label')?.includes(' over 7d; times in '),
    )
    t.regex((await page.locator('section[aria-label="errors"] .chart').getAttribute('aria-label'))!, /over 24h; times in /)
    await page.reload()
    await page.locator('section[aria-label="errors"] .chart[data-points]').waitFor()
    t.is(
      await page.getByRole('group', { name: 'Range of the dashboard' }).getByRole('button', { name: '7d' }).getAttribute('aria-pressed'),
      'true',
    )

    // Live: a point in a new hour shows up without a reload.
    const chart = page.locator('section[aria-label="errors"] .chart')
    const before = Number(await chart.getAttribute('data-points'))
    await request(web.app.url, '/api/v1/points', {
      json: {
        points: [
          { stat: 'errors', count: 4, t: Math.floor(Date.now() / 1000) - 5 },
          { stat: 'errors', count: 2, t: Math.floor(Date.now() / 1000) - 86_400 + 600 },
        ],
      },
      bearer: key,
    })
    await page.waitForFunction(
      (n) => Number(document.querySelector('section[aria-label="errors"] .chart')?.getAttribute('data-points')) > n,
      before,
      { timeout: 20_000 },
    )

    await page.getByRole('link', { name: '← Dashboards' }).click()
    await page.getByRole('link', { name: 'Shop' }).waitFor()
    await screenshot(page, 'dashboards')
    t.deepEqual(problems, [])
  },
)

test.serial("dashboards: at 375 px the cards stack, nothing scrolls sideways; another account's dashboard is not found", async (t) => {
  const { user } = await seeded()
  const d = (
    await request(web.app.url, '/api/v1/dashboards', {
      session: user.session,
      json: { name: 'Phone', cards: [{ stats: ['orders', 'latency'] }, { stats: ['errors'], range: '7d' }] },
    })
  ).body.dashboard
  const { page, problems } = await signedInTab(web.browser, web.app.url, user, 375, 812)
  await page.goto(`${web.app.url}/dashboards`)
  await page.getByRole('link', { name: 'Phone' }).click()
  await page.locator('section[aria-label="errors"] .chart[data-points]').waitFor()
  t.true(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no sideways scroll')
  const box = await page.locator('section[aria-label="errors"]').boundingBox()
  t.true(box!.width <= 375 && box!.x >= 0)
  await screenshot(page, 'dashboard-375')
  t.deepEqual(problems, [])

  const other = await signUp(web.app.url)
  const tab = await signedInTab(web.browser, web.app.url, other)
  await tab.page.goto(`${web.app.url}/dashboards/${d.id}`)
  await tab.page.getByText('dashboard not found').waitFor()
  t.pass()
})

test.serial(
  "dashboards: a group-by card draws one line per group; saving the cards (a card removed) keeps the others' filter and group_by",
  async (t) => {
    const user = await signUp(web.app.url)
    const { key } = await createKey(web.app.url, user)
    const now = Math.floor(Date.now() / 1000)
    const points = ['web1', 'web2'].flatMap((host, h) =>
      Array.from({ length: 10 }, (_, i) => ({ stat: 'requests', count: 1 + h, t: now - 300 - i * 600, tags: { host, region: 'eu' } })),
    )
    t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
    await settle(web.app)
    const made = await request(web.app.url, '/api/v1/dashboards', {
      bearer: key,
      json: {
        name: 'Hosts',
        cards: [{ stats: ['requests'] }, { stats: ['requests'], title: 'By host', filter: 'region:eu', group_by: 'host' }],
      },
    })
    t.is(made.status, 201, made.text)
    const { page, problems } = await signedInTab(web.browser, web.app.url, user)
    await page.goto(`${web.app.url}/dashboards/${made.body.dashboard.id}`)
    const chart = page.locator('section[aria-label="By host"] .chart[data-points]')
    await chart.waitFor()
    t.regex((await chart.getAttribute('aria-label'))!, /^Chart of requests host=web1, requests host=web2 over /)
    await page.getByRole('button', { name: 'Remove requests' }).click()
    await page.locator('section[aria-label="requests"]').waitFor({ state: 'detached' })
    const read = await request(web.app.url, `/api/v1/dashboards/${made.body.dashboard.id}`, { bearer: key })
    t.deepEqual(
      read.body.dashboard.cards.map((c: { title: string; filter: string; group_by: string }) => [c.title, c.filter, c.group_by]),
      [['By host', 'region:eu', 'host']],
    )
    t.deepEqual(problems, [])
  },
)
