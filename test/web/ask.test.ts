// Journey: a question. The answer, the data behind a disclosure, the
// verifier's line; an empty question refused with the API's message.
import test from 'ava'
import { screenshot, signedInTab } from '../helpers/browser.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'
import { webSuite } from '../helpers/suite.js'

const web = webSuite({ workers: true })

test.serial('ask: a question answered with its data and the verifier line', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const noonYesterday = Math.floor(Date.now() / 86_400_000) * 86_400 - 43_200
  const points = [4, 7, 31].map((count, i) => ({ stat: 'signups', count, t: noonYesterday + i * 600 }))
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)

  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/ask`)
  await page.getByRole('button', { name: 'Ask', exact: true }).click()
  t.is(await page.locator('#query-error').textContent(), 'must not be empty')

  await page.getByLabel('Your question').fill('How many signups yesterday?')
  await page.keyboard.press('Enter')
  const answer = page.getByTestId('answer')
  await answer.waitFor()
  t.regex((await answer.textContent())!, /42/)
  t.regex((await page.getByTestId('verifier').textContent())!, /\S/)
  await page.getByText(/The data this answer rests on/).click()
  const row = page.locator('td[data-label="Value"]').first()
  t.is(await row.textContent(), '42')
  t.regex(page.url(), /\?q=How\+many\+signups\+yesterday/)
  await screenshot(page, 'ask')
  t.deepEqual(
    problems.filter((p) => !p.includes('status of 400')),
    [],
    'nothing but the refused empty question',
  )
})

test.serial('ask: a "Did you mean" hint is a link that asks again; example questions say "how many" only of counters', async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const noonYesterday = Math.floor(Date.now() / 86_400_000) * 86_400 - 43_200
  const points = [
    ...[100, 200, 300].map((value, i) => ({ stat: 'latency_ms', value, t: noonYesterday + i * 600 })),
    { stat: 'orders', count: 5, t: noonYesterday },
  ]
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)

  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/ask`)
  // Examples: "How many" of the counter, an average of the gauge, never "How many latency_ms".
  // Both were written at noon yesterday: the examples' span reaches back to them (24 hours while that is under 20
  // hours ago, before 08:00 UTC; 7 days after).
  const span = Date.now() / 1000 - noonYesterday < 20 * 3600 ? 'in the last 24 hours' : 'in the last 7 days'
  await page.getByRole('button', { name: `How many orders ${span}?` }).waitFor()
  t.is(await page.getByRole('button', { name: /How many latency_ms/ }).count(), 0)
  t.is(await page.getByRole('button', { name: `Average latency_ms ${span}` }).count(), 1)

  // A percentile of a gauge is answered: three readings, 100, 200 and 300, so its p95 is the largest.
  await page.getByLabel('Your question').fill('p95 latency yesterday')
  await page.keyboard.press('Enter')
  const answer = page.getByTestId('answer')
  await answer.waitFor()
  t.regex((await answer.textContent())!, /^The p95 of latency_ms yesterday .*was 300 \(3 readings\)/)

  await page.getByLabel('Your question').fill('average rainfall yesterday')
  await page.keyboard.press('Enter')
  // The p95 answer above has its own "Did you mean" (latency_ms, a fuzzy match, linked to its page): wait for this decline.
  await page.waitForFunction(() => /won't guess/.test(document.querySelector('[data-testid="answer"]')?.textContent ?? ''))
  const link = page.getByTestId('did-you-mean').getByRole('link', { name: 'latency_ms' })
  t.is(await link.getAttribute('href'), `/ask?q=${encodeURIComponent('average latency_ms yesterday')}`)
  await link.click()
  await page.waitForFunction(() => /averaged 200/.test(document.querySelector('[data-testid="answer"]')?.textContent ?? ''))
  t.regex((await answer.textContent())!, /latency_ms averaged 200/)
  t.is(await page.getByLabel('Your question').inputValue(), 'average latency_ms yesterday')
  t.regex(page.url(), /\?q=average\+latency_ms\+yesterday/)
  await screenshot(page, 'ask-did-you-mean')
  t.deepEqual(problems, [])
})

test.serial("ask: the examples name the account's stats that have data, over a span holding it, and each is answered", async (t) => {
  const user = await signUp(web.app.url)
  const { key } = await createKey(web.app.url, user)
  const now = Math.floor(Date.now() / 1000)
  // "aaa.empty" and "aab.idle" come first by name but hold no point (a stat an import or a delete left empty).
  await web.app
    .sql`insert into stats (account_id, name, kind) values (${user.accountId}, 'aaa.empty', 'counter'), (${user.accountId}, 'aab.idle', 'gauge')`
  const points = [
    ...[3, 4].map((count, i) => ({ stat: 'orders', count, t: now - 1800 + i * 60 })),
    ...[10, 30].map((value, i) => ({ stat: 'queue.depth', value, t: now - 1800 + i * 60 })),
  ]
  t.is((await request(web.app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(web.app)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/ask`)
  const first = page.getByRole('button', { name: 'How many orders in the last 24 hours?' })
  await first.waitFor()
  const names = await page.locator('p.small button.link').allTextContents()
  t.false(
    names.some((n) => /aaa\.empty|aab\.idle/.test(n)),
    names.join(' | '),
  )
  t.true(names.includes('Average queue.depth in the last 24 hours'), names.join(' | '))
  const answer = page.getByTestId('answer')
  for (const [question, expect] of [
    ['How many orders in the last 24 hours?', /\b7\b/],
    ['Average queue.depth in the last 24 hours', /\b20\b/],
  ] as const) {
    await page.getByRole('button', { name: question }).click()
    await page.waitForURL(
      new RegExp(`q=${encodeURIComponent(question).replace(/%20/g, '\\+').replace(/\?/g, '\\?').replace(/\./g, '\\.')}`),
    )
    await page.waitForFunction(
      (re) => new RegExp(re).test(document.querySelector('[data-testid="answer"]')?.textContent ?? ''),
      expect.source,
    )
    t.regex((await answer.textContent())!, expect, question)
  }
  t.deepEqual(problems, [])
})
