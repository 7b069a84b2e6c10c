// Journey: import a file with a bad line (the dry run lists it by line and
// writes nothing), then a good file: confirm, follow the progress bar to the
// end, and open the imported stat.
import test from 'ava'
import { screenshot, signedInTab } from '../helpers/browser.js'
import { signUp } from '../helpers/factories.js'
import { webSuite } from '../helpers/suite.js'

const web = webSuite({ workers: true })

test.serial('import: a bad line in the dry run, then a good file imported with its progress', async (t) => {
  const user = await signUp(web.app.url)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/import`)
  const day = Math.floor(Date.now() / 1000) - 3 * 86_400
  const rows = Array.from({ length: 48 }, (_, i) => `orders,${i % 5},${day + i * 3600}`)
  const bad = ['stat,value,timestamp', ...rows.slice(0, 10), 'orders,lots,123', ...rows.slice(10)].join('\n')
  await page.getByLabel('Export file').setInputFiles({ name: 'orders.csv', mimeType: 'text/csv', buffer: Buffer.from(bad) })
  await page.getByRole('button', { name: 'Preview' }).click()
  await page.getByText('Dry run: nothing written yet').waitFor()
  t.is(await page.locator('td.num', { hasText: /^12$/ }).count(), 1, 'the bad line is listed by its line number')
  t.regex((await page.getByTestId('totals').textContent())!, /48 will be imported/)
  t.is((await web.app.sql`select 1 from stats`).length, 0, 'the dry run wrote nothing')
  await screenshot(page, 'import-preview')

  await page
    .getByLabel('Export file')
    .setInputFiles({ name: 'orders.csv', mimeType: 'text/csv', buffer: Buffer.from(['stat,value,timestamp', ...rows].join('\n')) })
  await page.getByRole('button', { name: 'Preview' }).click()
  await page.getByRole('button', { name: 'Import 48 points' }).click()
  await page.getByRole('heading', { name: 'Import complete' }).waitFor({ timeout: 30_000 })
  t.is(await page.locator('progress').getAttribute('value'), '100')
  const [{ n }] = await web.app
    .sql`select count(*)::int as n from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.name = 'orders'`
  t.is(n, 48)
  await screenshot(page, 'import-done')
  await page.getByRole('link', { name: 'orders' }).click()
  await page.locator('.chart[data-drawn]').waitFor()
  t.deepEqual(problems, [])
})
