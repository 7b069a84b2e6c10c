// Journey: the Anomalies page. A starter account sees its stat in the
// diagnostics table with the reason in plain words; a free account sees
// which plans include detection, with a link to billing.
import test from 'ava'
import { screenshot, signedInTab } from '../helpers/browser.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'
import { webSuite } from '../helpers/suite.js'
import { newestCompleteHour, sweep } from '../../shared/anomalies/sweep.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'

const web = webSuite({ workers: true })

/** Asks the API until `done` holds: the hourly rollup runs on its own queue after ingest settles. */
async function until(user: Awaited<ReturnType<typeof signUp>>, path: string, done: (body: any) => boolean): Promise<any> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const res = await request(web.app.url, path, { session: user.session })
    if (res.status === 200 && done(res.body)) return res.body
    if (Date.now() > deadline) throw new Error(`${path} never got there: ${res.status} ${res.text}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

test.serial('anomalies: a starter account sees its stat and why it is not checked yet', async (t) => {
  const user = await signUp(web.app.url)
  await web.app.sql`update accounts set plan = 'starter' where id = ${user.accountId}`
  const { key } = await createKey(web.app.url, user)
  const now = Math.floor(Date.now() / 1000)
  t.is(
    (await request(web.app.url, '/api/v1/points', { json: { points: [{ stat: 'orders', count: 3, t: now - 7200 }] }, bearer: key })).status,
    200,
  )
  await settle(web.app)
  await until(user, '/api/v1/anomalies/diagnostics', (d) => d.stats[0]?.reason === 'short')

  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/stats`)
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Anomalies' }).click()
  await page.waitForURL(/\/anomalies$/)
  const row = page.getByTestId('diagnostics').locator('tbody tr')
  await row.first().waitFor()
  t.is(await row.count(), 1)
  t.is(await row.locator('td[data-label="Stat"]').textContent(), 'orders')
  t.is(await row.locator('td[data-label="Checked"]').textContent(), 'no')
  t.regex(
    (await row.locator('td[data-label="Why"]').textContent())!,
    /^It does not have enough hours of history yet to learn what normal looks like\./,
  )
  await page.getByText('No incidents in the last 7d.').waitFor()
  t.is(await page.getByTestId('plan-notice').count(), 0)
  await screenshot(page, 'anomalies')
  t.deepEqual(problems, [])
})

test.serial(
  "anomalies: open and closed incidents, filtered by status, each linking to its stat's chart where its hours are marked",
  async (t) => {
    const user = await signUp(web.app.url)
    await web.app.sql`update accounts set plan = 'pro' where id = ${user.accountId}`
    const { key } = await createKey(web.app.url, user)
    const now = new Date()
    const newest = newestCompleteHour(now)
    // Ten days of a steady gauge with a spike five days ago (closed) and one in the newest hour (open).
    const values = Array.from({ length: 240 }, (_, i) => 50 * (1 + 0.05 * Math.sin(i * 1.7)))
    values[240 - 1 - 120] = 900
    values[239] = 1200
    const points = values.map((v, i) => ({ stat: 'queue.wait', value: v, t: newest - (239 - i) * 3600 + 1800 }))
    t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
    await settle(web.app)
    await refreshRollups(web.app.sql)
    await sweep(web.app.sql, now, { staleAfterSeconds: 900 })

    const { page, problems } = await signedInTab(web.browser, web.app.url, user)
    await page.goto(`${web.app.url}/anomalies`)
    const rows = page.getByTestId('incidents').locator('tbody tr')
    await rows.first().waitFor()
    t.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-status'))), ['open', 'closed'])
    // The list says what a person needs; the statistics are under Details, closed until asked for.
    const closedAt = new Date((newest - 120 * 3600) * 1000).toISOString()
    t.regex((await rows.nth(1).locator('td[data-label="What"]').textContent())!, /^Spike/)
    t.is(
      await rows.nth(1).getByTestId('summary').textContent(),
      `Usually ${(await rows.nth(1).getByTestId('summary').textContent())!.match(/^Usually ([\d.]+ to [\d.]+)/)![1]} lately; it was 900, during ${closedAt.slice(0, 10)} ${closedAt.slice(11, 16)}-${new Date(Date.parse(closedAt) + 3_600_000).toISOString().slice(11, 16)} UTC`,
    )
    t.regex(
      (await rows.nth(0).getByTestId('summary').textContent())!,
      /^Usually [\d.]+ to [\d.]+ lately; it was 1200, since \d{4}-\d\d-\d\d \d\d:\d\d-\d\d:\d\d UTC$/,
    )
    const details = rows.nth(1).getByTestId('explanation')
    t.false(await details.isVisible(), 'the statistics wait under Details')
    await rows.nth(1).getByText('Details').click()
    await details.waitFor()
    t.regex((await details.textContent())!, /it was 900, [\d.]+ times the usual spread above\. Expected [\d.]+ from the \d+ trailing hours/)
    t.regex((await rows.nth(0).locator('td[data-label="When"]').textContent())!, /Ongoing/)
    await screenshot(page, 'incidents')
    await page.getByTestId('incident-status').selectOption('closed')
    await page.waitForURL(/status=closed/)
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="incidents"] tbody tr').length === 1)
    t.is(await rows.first().getAttribute('data-status'), 'closed')
    await rows.first().getByRole('link', { name: 'queue.wait' }).click()
    await page.waitForURL(/\/stats\/queue\.wait\?range=7d$/)
    await page.getByText(/Red dots: the 2 hours the detector flagged as unusual/).waitFor()
    t.deepEqual(problems, [])
  },
)

test.serial('anomalies: a free account is told which plans include detection, with a link to billing', async (t) => {
  const user = await signUp(web.app.url)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/anomalies`)
  const notice = page.getByTestId('plan-notice')
  await notice.waitFor()
  t.regex((await notice.textContent())!, /^Anomaly detection is part of the starter, pro and business plans\./)
  t.is(await notice.getByRole('link').getAttribute('href'), '/billing')
  t.is(await page.getByTestId('diagnostics').count(), 0)
  t.deepEqual(problems, [])
})

test.serial(
  "stat page: on a plan with detection the 7d chart shades the back-test's normal range and marks its flagged hour; on the free plan it does not",
  async (t) => {
    const starter = await signUp(web.app.url)
    await web.app.sql`update accounts set plan = 'starter' where id = ${starter.accountId}`
    const free = await signUp(web.app.url)
    const hour = Math.floor(Date.now() / 3_600_000) * 3600
    // A day and a half of hourly counts around 10 (enough complete hours to arm the baselines), then one hour of 400.
    const points = Array.from({ length: 36 }, (_, i) => ({
      stat: 'orders',
      count: i === 34 ? 400 : 8 + (i % 5),
      t: hour - (36 - i) * 3600 + 60,
    }))
    for (const user of [starter, free]) {
      const { key } = await createKey(web.app.url, user)
      t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
    }
    await settle(web.app)
    const backtest = await until(starter, '/api/v1/anomalies/backtest?stat=orders&range=7d', (b) =>
      b.buckets.some((x: { lower: number | null }) => x.lower !== null),
    )
    t.deepEqual(
      backtest.buckets.filter((b: { anomalous: boolean }) => b.anomalous).map((b: { t: number }) => b.t),
      [hour - 2 * 3600],
      'the back-test flags the hour of 400',
    )

    for (const [user, shaded] of [
      [starter, true],
      [free, false],
    ] as const) {
      const { page, problems } = await signedInTab(web.browser, web.app.url, user)
      await page.goto(`${web.app.url}/stats/orders?range=7d`)
      await page.locator('.chart[data-drawn]').waitFor()
      t.is(await page.locator('.u-legend').getByText('Normal range (high)').count(), shaded ? 1 : 0)
      t.is(await page.getByText('Shaded: the normal range the anomaly detector expected for each hour.').count(), shaded ? 1 : 0)
      t.is(await page.locator('.u-legend').getByText('Flagged hour').count(), shaded ? 1 : 0)
      t.is(await page.getByText('Red dots: the hour the detector flagged as unusual (see Anomalies).').count(), shaded ? 1 : 0)
      if (shaded) await screenshot(page, 'stat-band')
      t.deepEqual(problems, [])
    }

    // The band is the whole stat's: a chart narrowed to some of its series (an incident's "carried by" link) has none.
    const { key } = await createKey(web.app.url, starter)
    const tagged = { points: [{ stat: 'orders', count: 3, t: hour - 3600 + 60, tags: { host: 'web1' } }] }
    t.is((await request(web.app.url, '/api/v1/points', { json: tagged, bearer: key })).status, 200)
    await settle(web.app)
    const { page, problems } = await signedInTab(web.browser, web.app.url, starter)
    await page.goto(`${web.app.url}/stats/orders?range=7d&filter=host:web1`)
    await page.locator('.chart[data-drawn]').waitFor()
    t.is(await page.locator('.u-legend').getByText('Normal range (high)').count(), 0)
    t.is(await page.getByText('Shaded: the normal range the anomaly detector expected for each hour.').count(), 0)
    t.deepEqual(problems, [])
  },
)

test.serial("anomalies: the explanations state their hours on the account's clock, not UTC", async (t) => {
  const user = await signUp(web.app.url)
  await web.app.sql`update accounts set plan = 'pro', time_zone = 'Asia/Kolkata' where id = ${user.accountId}`
  const { key } = await createKey(web.app.url, user)
  const now = new Date()
  const newest = newestCompleteHour(now)
  const values = Array.from({ length: 240 }, (_, i) => 50 * (1 + 0.05 * Math.sin(i * 1.7)))
  values[239] = 1200
  const points = values.map((v, i) => ({ stat: 'zone.wait', value: v, t: newest - (239 - i) * 3600 + 1800 }))
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  await refreshRollups(web.app.sql)
  await sweep(web.app.sql, now, { staleAfterSeconds: 900 })
  const [stored] = await web.app.sql<
    { explanation: string }[]
  >`select explanation from anomalies a join stats s on s.id = a.stat_id where s.account_id = ${user.accountId}`
  t.regex(stored.explanation, / UTC/, 'stored as the detector wrote it')

  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/anomalies`)
  const shown = (await page.getByTestId('explanation').first().textContent())!
  t.notRegex(shown, /UTC/)
  // The newest hour, in Kolkata (UTC+5:30).
  const start = new Date(newest * 1000 + 5.5 * 3_600_000).toISOString()
  t.true(shown.startsWith(`${start.slice(0, 10)} ${start.slice(11, 16)}-`), shown)
  t.regex(shown, /GMT\+5:30/)
  t.deepEqual(problems, [])
})

test.serial(
  "anomalies: an incident on a tagged stat names the series that carry it, linking to the stat's chart of that series",
  async (t) => {
    const user = await signUp(web.app.url)
    await web.app.sql`update accounts set plan = 'pro' where id = ${user.accountId}`
    const { key } = await createKey(web.app.url, user)
    const now = new Date()
    const newest = newestCompleteHour(now)
    // Two hosts of about 40 and 60 requests an hour for two days; in the newest hour web2 sends 700.
    const points = ['web1', 'web2'].flatMap((host, k) =>
      Array.from({ length: 48 }, (_, i) => ({
        stat: 'requests',
        count: host === 'web2' && i === 47 ? 700 : Math.round((40 + 20 * k) * (1 + 0.05 * Math.sin(i * 1.7))),
        tags: { host },
        t: newest - (47 - i) * 3600 + 1800,
      })),
    )
    t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
    await settle(web.app)
    await refreshRollups(web.app.sql)
    await sweep(web.app.sql, now, { staleAfterSeconds: 900 })

    const { page, problems } = await signedInTab(web.browser, web.app.url, user)
    await page.goto(`${web.app.url}/anomalies`)
    const row = page.getByTestId('incidents').locator('tbody tr').first()
    await row.waitFor()
    t.regex((await row.getByTestId('summary').textContent())!, /; mostly host:web2 \(\d+ %\)$/)
    t.regex((await row.getByTestId('carriers').textContent())!, /^Carried by host:web2 \(\d+ %\)$/)
    await screenshot(page, 'incidents-tagged')
    await row.getByTestId('carriers').getByRole('link', { name: 'host:web2' }).click()
    await page.waitForURL(/\/stats\/requests\?range=7d&filter=host%3Aweb2$/)
    await page.locator('.chart[data-drawn]').waitFor()
    t.deepEqual(problems, [])
  },
)
