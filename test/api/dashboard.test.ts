import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })

async function account() {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const n = Math.floor(Date.now() / 1000)
  // The last two latency points in one 5-minute bucket whatever the time: the later one 20 s ago (or a second
  // past the bucket's start), the earlier 10 s before it or at the start.
  const start = Math.floor((n - 20) / 300) * 300
  const last = Math.max(n - 20, start + 1)
  const res = await request(app.url, '/ez', {
    json: {
      ezkey: key,
      data: [
        { stat: 'orders', count: 2, t: n - 600 },
        { stat: 'orders', count: 5, t: n - 30 },
        { stat: 'latency', value: 10, t: n - 600 },
        { stat: 'latency', value: 30, t: Math.max(last - 10, start) },
        { stat: 'latency', value: 20, t: last },
        { stat: 'old', count: 1, t: n - 3 * 86_400 },
      ],
    },
  })
  if (res.body.accepted !== 6) throw new Error(res.text)
  await settle(app)
  return { user, key }
}

test('4.4 the dashboard summarises every stat for the range: last value, totals or average/min/max, buckets', async (t) => {
  const { user } = await account()
  const res = await request(app.url, '/api/v1/dashboard?range=1h', { session: user.session })
  t.is(res.status, 200)
  t.like(res.body.range, { requested_range: '1h', bucket_seconds: 300 })
  const byName = Object.fromEntries(res.body.stats.map((s: { name: string }) => [s.name, s]))
  t.deepEqual(Object.keys(byName), ['latency', 'old', 'orders'])
  t.deepEqual(byName.orders.summary, { total: 7, n: 2 })
  t.is(byName.orders.last_value, 5)
  t.deepEqual(byName.latency.summary, { average: 20, min: 10, max: 30, n: 3 })
  t.is(byName.latency.last_value, 20)
  t.is(byName.latency.points.length, 2)
  t.deepEqual(byName.old.summary, { total: 0, n: 0 }, 'a stat with nothing in the range is listed with an empty summary')
  t.deepEqual(byName.old.points, [])
  t.truthy(byName.old.last_point_at)
})

test('4.4 range defaults to 24h; each valid value is accepted; an unknown one is a 400 naming the valid set', async (t) => {
  const { user } = await account()
  t.is((await request(app.url, '/api/v1/dashboard', { session: user.session })).body.range.requested_range, '24h')
  for (const range of ['1h', '6h', '24h', '7d', '30d', '90d', '180d'])
    t.is((await request(app.url, `/api/v1/dashboard?range=${range}`, { session: user.session })).status, 200, range)
  const day = await request(app.url, '/api/v1/dashboard?range=24h', { session: user.session })
  t.is(day.body.range.bucket_seconds, 3600, 'sparkline buckets served by the hourly rollup')
  t.is(Date.parse(day.body.range.from) % 900_000, 0, "the window starts where the 24 h chart's does")
  const week = await request(app.url, '/api/v1/dashboard?range=7d', { session: user.session })
  t.deepEqual(week.body.stats.find((s: { name: string }) => s.name === 'old').summary, { total: 1, n: 1 })
  const bad = await request(app.url, '/api/v1/dashboard?range=2w', { session: user.session })
  t.is(bad.status, 400)
  t.is(bad.body.detail, 'invalid range: must be one of 1h, 6h, 24h, 7d, 30d, 90d, 180d')
})

test('4.4 the dashboard is session only: a Bearer key is 403, nothing is 401', async (t) => {
  const { key } = await account()
  t.is((await request(app.url, '/api/v1/dashboard', { bearer: key })).status, 403)
  t.is((await request(app.url, '/api/v1/dashboard')).status, 401)
})

test("account isolation: the dashboard shows only the caller's stats", async (t) => {
  await account()
  const other = await signUp(app.url)
  const res = await request(app.url, '/api/v1/dashboard', { session: other.session })
  t.deepEqual(res.body.stats, [])
})

test("one window, one number: the dashboard total of a range is the stat page's for the same range", async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const ranges = ['6h', '24h', '7d']
  const points: Array<{ stat: string; count: number; t: number }> = []
  for (const range of ranges) {
    const stat = `window.${range}`
    await request(app.url, '/ez', { json: { ezkey: key, data: [{ stat, count: 1, t: Math.floor(Date.now() / 1000) - 60 }] } })
    await settle(app)
    // One point just before the chart's window: outside it on every page. The dashboard used to start at the
    // hour (6 h every hour, 7 d every 6 h) and counted it.
    const chart = await request(app.url, `/api/v1/stats/${stat}?range=${range}`, { bearer: key })
    points.push({ stat, count: 100, t: Date.parse(chart.body.range.from) / 1000 - 1 })
  }
  t.is((await request(app.url, '/ez', { json: { ezkey: key, data: points } })).body.accepted, ranges.length)
  await settle(app)
  for (const range of ranges) {
    const stat = `window.${range}`
    const chart = await request(app.url, `/api/v1/stats/${stat}?range=${range}`, { bearer: key })
    const dash = await request(app.url, `/api/v1/dashboard?range=${range}`, { session: user.session })
    const chartTotal = chart.body.points.reduce((sum: number, p: { value: number }) => sum + p.value, 0)
    const row = dash.body.stats.find((s: { name: string }) => s.name === stat)
    t.is(chartTotal, 1, `${range}: the stat page counts the point inside the window only`)
    t.is(row.summary.total, chartTotal, `${range}: the dashboard counts the same`)
    t.is(dash.body.range.from, chart.body.range.from, `${range}: and says the same window`)
  }
})
