// Tags in the app (docs/decisions.md §24): the stats list shows each stat once with its series count.
import test from 'ava'
import { signedInTab } from '../helpers/browser.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'
import { webSuite } from '../helpers/suite.js'

const web = webSuite({ workers: true })

test('the stats list shows a tagged stat once, with its series count', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const points = ['web1', 'web2', 'web3'].map((host) => ({ stat: 'latency', value: 10, tags: { host } }))
  points.push({ stat: 'signups', value: 1 } as never)
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/stats`)
  const rows = page.locator('tbody tr')
  await rows.first().waitFor()
  t.is(await rows.count(), 2, 'each stat once')
  t.is(await rows.filter({ hasText: 'latency' }).locator('[data-series]').textContent(), '3 series')
  t.is(await rows.filter({ hasText: 'signups' }).locator('[data-series]').count(), 0, 'an untagged stat says nothing of series')
  t.deepEqual(problems, [])
})
