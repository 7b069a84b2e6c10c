// The Send data page: copy-paste set-ups for Telegraf, a StatsD client and Prometheus,
// filled in with a key created on the page, under the app's strict CSP; the key in the set-up works.
import test from 'ava'
import { screenshot, signedInTab, visible } from '../helpers/browser.js'
import { signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { webSuite } from '../helpers/suite.js'
import { APP_CSP } from '../../api/web/pages.js'
import { statsdExample } from '../../api/web/send-config.js'
import { readFileSync } from 'node:fs'

const web = webSuite({ env: { STATSD_PORT: '0' } })

test('send data: a key created on the page fills the Telegraf, StatsD and Prometheus set-ups, and it writes', async (t) => {
  const user = await signUp(web.app.url)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  const res = await page.goto(`${web.app.url}/send`)
  t.is(res?.headers()['content-security-policy'], APP_CSP)
  t.regex((await page.getByTestId('telegraf').textContent())!, /token = "<API_KEY>"/, 'a placeholder until a key is given')
  await page.getByRole('button', { name: 'Create a key for these agents' }).click()
  await page.getByTestId('key-note').waitFor()
  const key = await page.getByLabel('API key').inputValue()
  t.regex(key, /^mk_/)
  const telegraf = (await page.getByTestId('telegraf').textContent())!
  t.true(telegraf.includes(`token = "${key}"`))
  t.true(telegraf.includes(`urls = ["${web.app.url}"]`))
  const statsd = (await page.getByTestId('statsd').textContent())!
  t.true(statsd.includes(`prefix: '${key}.'`))
  t.true(statsd.includes('port: 0') || /port: \d+/.test(statsd))
  const prom = (await page.getByTestId('prometheus').textContent())!
  t.true(prom.includes(`url: ${web.app.url}/api/v1/prom/write`))
  t.true(prom.includes(`credentials: ${key}`))
  t.is(await page.getByRole('button', { name: /^Copy .* set-up$/ }).count(), 3)
  t.true(await visible(page.getByRole('link', { name: 'Send data' })), 'in the navigation')
  await screenshot(page, 'send-data')
  // The key the page filled in is one the write routes take.
  const write = await request(web.app.url, '/api/v2/write?precision=s', {
    body: 'from_page v=1',
    headers: { authorization: `Token ${key}` },
  })
  t.is(write.status, 204)
  t.deepEqual(problems, [])
})

test('send data needs a session', async (t) => {
  const res = await request(web.app.url, '/send')
  t.is(res.status, 302)
  t.regex(res.headers.get('location') ?? '', /^\/signin\?next=%2Fsend/)
})

/** The line protocol Telegraf's cpu and mem inputs write under a set-up: every field its fieldinclude keeps (all ten cpu fields without one). */
function telegrafLines(config: string): string {
  const include = (input: string) => {
    const block = new RegExp(`\\[\\[inputs\\.${input}\\]\\]([\\s\\S]*?)(?=\\n\\[\\[|$)`).exec(config)?.[1] ?? ''
    const list = /^\s*fieldinclude = \[([^\]]*)\]/m.exec(block)?.[1]
    return list === undefined ? null : [...list.matchAll(/"([^"]+)"/g)].map((m) => m[1])
  }
  const cpuAll = [
    'usage_user',
    'usage_system',
    'usage_idle',
    'usage_nice',
    'usage_iowait',
    'usage_irq',
    'usage_softirq',
    'usage_steal',
    'usage_guest',
    'usage_guest_nice',
  ]
  const cpu = (include('cpu') ?? cpuAll).map((f) => `${f}=1.5`).join(',')
  const mem = (include('mem') ?? ['used_percent', 'available']).map((f) => (f === 'available' ? `${f}=123i` : `${f}=40.5`)).join(',')
  return `cpu,cpu=cpu-total,host=web1 ${cpu}\nmem,host=web1 ${mem}`
}

test('send data on the free plan: the Telegraf set-up keeps within the 10 stats and says why; Prometheus names the plan', async (t) => {
  const user = await signUp(web.app.url)
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/send`)
  await page.getByRole('button', { name: 'Create a key for these agents' }).click()
  await page.getByTestId('key-note').waitFor()
  const key = await page.getByLabel('API key').inputValue()
  const telegraf = (await page.getByTestId('telegraf').textContent())!
  t.regex(telegraf, /Your plan tracks 10 series/)
  t.regex(telegraf, /\[\[inputs\.cpu\]\][\s\S]*fieldinclude = \["usage_idle", "usage_user", "usage_system"\]/)
  // What Telegraf would write with this set-up is taken, and stays within the plan.
  const write = await request(web.app.url, '/api/v2/write?precision=s', {
    body: telegrafLines(telegraf),
    headers: { authorization: `Token ${key}` },
  })
  t.is(write.status, 204, write.text)
  // Five stats, each with the host's one series (docs/decisions.md §24: plans count series).
  const counts = async () =>
    (
      await web.app.sql<{ stats: number; series: number }[]>`
      select count(*) filter (where parent_id is null)::int as stats, count(*) filter (where parent_id is not null)::int as series
      from stats where account_id = ${user.accountId}`
    )[0]
  t.deepEqual(await counts(), { stats: 5, series: 5 })
  // The whole cpu input (the old set-up) is refused on this plan: that is what the filter avoids.
  const whole = await request(web.app.url, '/api/v2/write?precision=s', {
    body: telegrafLines(telegraf.replace(/^\s*fieldinclude = \["usage_idle".*$/m, '')).replace(/host=web1/g, 'host=web2'),
    headers: { authorization: `Token ${key}` },
  })
  t.is(whole.status, 403, whole.text)
  t.deepEqual(await counts(), { stats: 5, series: 5 }, 'nothing of it stored')
  t.regex((await page.getByTestId('prometheus').textContent())!, /Your plan \(free\) tracks 10 stats/)
  t.deepEqual(problems, [])
})

test('send data on a paid plan: no free-plan filter or warning', async (t) => {
  const user = await signUp(web.app.url)
  await web.app.sql`update accounts set plan = 'pro' where id = ${user.accountId}`
  const { page, problems } = await signedInTab(web.browser, web.app.url, user)
  await page.goto(`${web.app.url}/send`)
  const telegraf = (await page.getByTestId('telegraf').textContent())!
  t.notRegex(telegraf, /\[\[inputs\.cpu\]\][^[]*fieldinclude/)
  t.notRegex(telegraf, /10 stats/)
  const prom = (await page.getByTestId('prometheus').textContent())!
  t.notRegex(prom, /10 stats|tracks/)
  t.true(prom.includes('/api/v1/prom/write'))
  t.deepEqual(problems, [])
})

test("the README's hot-shots example and the Send data page use the same prefix: the key and a dot", async (t) => {
  const readme = readFileSync('README.md', 'utf8')
  const inReadme = /new StatsD\(\{[^}]*prefix: '([^']*)'/.exec(readme)?.[1]
  const onPage = /prefix: '([^']*)'/.exec(statsdExample('localhost', 8125, 'mk_KEY'))?.[1]
  t.is(onPage, 'mk_KEY.')
  t.truthy(inReadme)
  t.true(inReadme!.endsWith('.'), `README prefix "${inReadme}" has no dot: hot-shots adds no separator, so the key would run into the name`)
})
